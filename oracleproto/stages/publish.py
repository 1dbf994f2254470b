"""DVC stage `publish`: the stage outputs → hub/, a folder that is the HF dataset repo.

Uploading is not a stage: `oracleproto publish --hub-dir hub --repo-id ORG/NAME --tag vX.Y.Z`.
"""

from oracleproto.config import load_params
from oracleproto.publish import hub
from oracleproto.publish.hubdir import Layout, build
from oracleproto.stages import run_stage


def main() -> None:
    listing = build(Layout(), load_params().publish)
    size = sum(f.size for f in listing)
    print(f"hub/: {len(listing)} files, {size} bytes, sha256 {hub.hub_digest(listing)}")


if __name__ == "__main__":
    run_stage(main)
