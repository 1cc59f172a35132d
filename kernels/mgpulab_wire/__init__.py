"""What the kernel and the toolkit both need to talk to the lab, below both of them.

``protocol_generated`` (the protocol's constants and checking constructors,
generated from the TypeScript definition), ``frames`` (a message as one
framed ``os.write``), and ``processes`` (process liveness and the child
processes whose stacks the kernel reports). Imports neither ``mgpulab`` nor
``mgpulab_kernel``, and never torch.
"""
