"""What the keeper and the connector agree on: where the keeper's socket is.

Both run inside the same Slurm job on the same node, so the job id names the
socket; the directory is the user's own (0700) so nobody else can connect.
Each script travels on its own (`python3 -c`), so this file is inlined into
both by the lab (server/hosts/slurm-scripts.ts), not imported.
"""
import os
import stat
import tempfile


def socket_path(runtime_dir: str) -> str:
    base = runtime_dir or os.path.join(tempfile.gettempdir(), "mgpulab-slurm-%d" % os.getuid())
    os.makedirs(base, mode=0o700, exist_ok=True)
    info = os.stat(base)
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        raise SystemExit("mgpulab: %s must be yours and private (0700)" % base)
    return os.path.join(base, "job-%s.sock" % os.environ.get("SLURM_JOB_ID", "none"))
