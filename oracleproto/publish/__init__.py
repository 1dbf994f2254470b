"""The Hugging Face dataset repo: the hub/ folder, its card, upload and tag."""
