"""``oracleproto publish`` (upload hub/ and tag it) and ``oracleproto load`` (load a config)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from oracleproto.cli.app import PARAMS_HELP, app, fail, from_params, user_errors
from oracleproto.config import load_params
from oracleproto.publish.hub import HubError, offline_mode, plan_release
from oracleproto.publish.hub import publish as publish_release
from oracleproto.publish.hubdir import Layout


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto publish --hub-dir hub --repo-id MaYiding/OracleProto --tag v1.2.0 --dry-run\n\n"
        "  HF_TOKEN=hf_... oracleproto publish --hub-dir hub --repo-id MaYiding/OracleProto --tag v1.2.0"
    )
)
def publish(
    hub_dir: Path = typer.Option(Layout().hub, "--hub-dir", help="The hub folder built by the publish stage (`dvc repro publish`)."),
    repo_id: Optional[str] = typer.Option(None, "--repo-id", help=from_params("Dataset repo on the Hub, ORG/NAME (it must exist).", "publish.repo_id")),
    tag: str = typer.Option(..., "--tag", help="Release tag vX.Y.Z, created on the uploaded commit."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the operations and every file with its sha256; send nothing."),
    params: Optional[Path] = typer.Option(None, help=PARAMS_HELP),
) -> None:
    """Upload the hub folder to a Hugging Face dataset repo (upload_folder), then tag the commit
    (create_tag). Needs HF_TOKEN with write access; --dry-run needs neither token nor network."""
    with user_errors():
        repo_id = load_params(params).overridden({"publish": {"repo_id": repo_id}}).publish.repo_id
        plan = plan_release(hub_dir, repo_id, tag)
    if dry_run:
        typer.echo(f"dry run, nothing sent: {len(plan.listing)} files, hub folder sha256 {plan.digest}")
        for line in plan.operations():
            typer.echo(line)
        return
    if offline_mode():
        fail("publishing needs the Hub but HF_HUB_OFFLINE is set: unset it, or use --dry-run")
        return
    token = os.environ.get("HF_TOKEN", "").strip()
    if not token:
        fail(f"HF_TOKEN is not set: publishing needs a Hugging Face token with write access to {repo_id}")
        return
    try:
        published = publish_release(plan, token)
    except HubError as exc:
        fail(str(exc))
        return
    typer.echo(f"published {repo_id} {tag}: commit {published.commit} ({published.commit_url}), {len(plan.listing)} files")


@app.command(
    epilog=(
        "Examples:\n\n"
        "  oracleproto load cutoff-2026-02-25 --from hub\n\n"
        "  oracleproto load sft --from MaYiding/OracleProto --revision v1.2.0"
    )
)
def load(
    config: str = typer.Argument(..., help="Configuration: questions, cutoff-YYYY-MM-DD, sft or rl."),
    source: str = typer.Option(..., "--from", help="A hub folder (local path) or a Hub dataset repo ORG/NAME."),
    revision: Optional[str] = typer.Option(None, help="Tag, branch or commit of a Hub repo (ignored for a local folder)."),
) -> None:
    """Load one configuration and print its split sizes (a local folder is read as its
    files are now, never from a stale cache)."""
    from datasets.exceptions import DatasetsError

    from oracleproto.publish.load import load_config, looks_local

    local = looks_local(source)
    if local and revision is not None:
        typer.echo(f"note: --revision is ignored for the local folder {source}", err=True)
    try:
        with user_errors():
            splits = load_config(source, config, None if local else revision)
    except (DatasetsError, ValueError, OSError) as exc:  # datasets' own failures
        fail(f"cannot load config {config!r} from {source}: {exc}")
        return
    where = source if local or revision is None else f"{source}@{revision}"
    sizes = ", ".join(f"{name} {split.num_rows} rows" for name, split in splits.items())
    typer.echo(f"{config} from {where}: {sizes}")
