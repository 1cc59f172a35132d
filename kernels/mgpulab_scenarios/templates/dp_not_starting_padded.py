from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
print(f"Padded variable-length batches of {PARAM.seq_batch_size} sequences through DataParallel x{PARAM.devices}"
      + (", the model trimming each chunk" if PARAM.trim_padding else ""))
import copy, torch, mgpulab as lab
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from mgpulab_scenarios import evidence
run = evidence.start("dp-not-starting/padded", devices=PARAM.devices, placement=PARAM.placement,
                     seq_batch_size=PARAM.seq_batch_size, trim_padding=PARAM.trim_padding, seed=PARAM.seed)
lengths = [10, 20, 30, 40, 5, 15, 25, 35]  # the article's Example 1
trim, dev = PARAM.trim_padding, lab.devices.device(0, PARAM.placement)
class SeqModel(nn.Module):
    def __init__(self):
        super().__init__(); self.linear = nn.Linear(10, 20)
    def forward(self, x, lengths):
        out = self.linear(x)
        return out[:, :int(lengths.max())] if trim else out
torch.manual_seed(PARAM.seed)
single = SeqModel().to(dev)
model = lab.DataParallel(copy.deepcopy(single), device_ids=list(range(PARAM.devices)), placement=PARAM.placement)
g = torch.Generator().manual_seed(PARAM.seed)
seqs = [torch.randn(n, 10, generator=g) for n in lengths]
bs, batches = PARAM.seq_batch_size, []
for i in range(0, len(lengths), bs):
    x, l = pad_sequence(seqs[i:i + bs], batch_first=True).to(dev), torch.tensor(lengths[i:i + bs]).to(dev)
    row = {"batch": i // bs, "shape": list(x.shape), "lengths": lengths[i:i + bs]}
    try:
        out, ref = model(x, lengths=l), single(x, l)
        row.update(ok=True, chunks=list(model.last_phases.samples), out_shape=list(out.shape),
                   max_diff_vs_single=(out - ref).abs().max().item() if out.shape == ref.shape else None)
        print("batch", row["batch"], "ok", tuple(out.shape), "chunks", row["chunks"])
    except Exception as err:
        row.update(ok=False, error=f"{type(err).__name__}: {' '.join(str(err).split())}")
        print("batch", row["batch"], "FAILED:", str(err).splitlines()[0])
    batches.append(row)
recorded = run.finish(batches=batches)
