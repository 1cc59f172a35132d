"""The Multi-GPU Lab kernel: a Python process on a PTY speaking framed messages."""
