from mgpulab_scenarios.templates.placeholders import PARAM  # the template's placeholders: this line is not rendered
import torch, mgpulab as lab
from torch import nn
from torch.nn.utils.rnn import pad_sequence
lengths = [10, 20, 30, 40, 5, 15, 25, 35]
trim = PARAM.trim_padding
class SeqModel(nn.Module):
    def __init__(self):
        super().__init__(); self.linear = nn.Linear(10, 20)
    def forward(self, x, lengths):
        out = self.linear(x)
        return out[:, :int(lengths.max())] if trim else out
torch.manual_seed(PARAM.seed)
model = lab.DataParallel(SeqModel().to(lab.devices.device(0, PARAM.placement)), device_ids=list(range(PARAM.devices)),
                         placement=PARAM.placement)
bs = PARAM.seq_batch_size
for i in range(0, len(lengths), bs):
    seqs = [torch.randn(n, 10) for n in lengths[i:i + bs]]
    x, l = pad_sequence(seqs, batch_first=True), torch.tensor(lengths[i:i + bs])
    try:
        out = model(x, lengths=l)
        print("batch", i // bs, "ok", tuple(out.shape), "chunks", model.last_phases.samples)
    except Exception as err:
        print("batch", i // bs, "FAILED:", str(err).splitlines()[0])
