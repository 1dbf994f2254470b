"""Exports for trainers: SFT trajectories, RL prompts and the reward that scores them."""
