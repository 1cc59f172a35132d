"""Slurm glue for the host agent: a keeper that holds the agent's allocation and a
connector that links a `srun --pty` step to it (see server/hosts/host-transport.ts)."""
