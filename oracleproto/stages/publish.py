"""DVC stage `publish`: the stage outputs → hub/, a folder that is the HF dataset repo.

Uploading is not a stage: `oracleproto publish --hub-dir hub --repo-id ORG/NAME --tag vX.Y.Z`.
"""

from oracleproto.params import load_params, section
from oracleproto.publish import hub
from oracleproto.publish.hubdir import Layout, PublishParams, build
from oracleproto.stages import run_stage


def main() -> None:
    listing = build(Layout(), PublishParams.from_section(section(load_params(), "publish")))
    size = sum(f.size for f in listing)
    print(f"hub/: {len(listing)} files, {size} bytes, sha256 {hub.hub_digest(listing)}")


if __name__ == "__main__":
    run_stage(main)
