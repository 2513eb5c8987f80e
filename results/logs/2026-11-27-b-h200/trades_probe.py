"""Instrumented TRADES training (the GPU record's command: method trades, preset none, 3 epochs, batch 512) for one code tree.
Usage: python probe.py CODE_DIR MODE [SMALL]
MODE: 'asis' (the tree's own trades_kl) or 'logtarget' (trades_kl replaced by the log-space-target KL) or 'clampkl'.
Records per step: natural/adversarial logit gaps, #probabilities that underflow to 0 (float32 softmax), KL, finiteness of
the gradient reaching the logits and of every parameter gradient, attack size; prints the first non-finite step."""
import sys, os, time, json, math
code, mode = sys.argv[1], sys.argv[2]
small = len(sys.argv) > 3
sys.path.insert(0, os.path.abspath(code))
import torch, torch.nn.functional as F
import swaro_nb.data as D
D.verify_file = lambda *a, **k: None          # the data here is data_batch_1 copied into every file
import swaro_nb.baselines as B
from swaro_nb.cli import config_for
print('code', code, 'mode', mode, 'torch', torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'cpu', flush=True)

kw = dict(method='trades', name=f'trades-{mode}', epochs=3, batch_size=512, monitor_every=3, ckpt_every=3,
          out_dir=f'/tmp/runs-{os.path.basename(os.path.abspath(code))}', progress=False)
if os.environ.get('PROBE_KW'): kw.update(json.loads(os.environ['PROBE_KW']))
if small: kw.update(subset_per_class=20, batch_size=50, width=8, attack_steps=2, monitor_bank=100, monitor_test=50, epochs=1)
cfg = config_for(None, **kw)
print('config:', {k: getattr(cfg, k) for k in ('lr', 'momentum', 'weight_decay', 'warmup_epochs', 'warmup_multiplier', 'batch_size',
      'eps', 'alpha', 'attack_steps', 'precision', 'channels_last', 'compile', 'fold_bn', 'cuda_graphs', 'extra')}, flush=True)

recs = []
orig_kl, orig_pgd = B.trades_kl, B.trades_pgd

def kl_logtarget(la, ln):
    with torch.autocast(la.device.type, enabled=False):
        a, n = la.float(), ln.float()
        return F.kl_div(F.log_softmax(a, 1), F.log_softmax(n, 1), reduction='sum', log_target=True) / a.shape[0]

kl_impl = {'asis': orig_kl, 'logtarget': kl_logtarget}[mode]

def _gap(t):
    t = t.detach().float(); return (t.max(1).values - t.min(1).values).max()

def kl_rec(la, ln):
    out = kl_impl(la, ln)
    r = recs[-1]   # the step's record, opened by the attack
    with torch.no_grad():
        r.update(kl=out.detach().float(), gap_nat=_gap(ln), gap_adv=_gap(la),
                 zero_nat=(F.softmax(ln.detach().float(), 1) == 0).sum(), zero_adv=(F.softmax(la.detach().float(), 1) == 0).sum(),
                 absmax=torch.maximum(ln.detach().float().abs().max(), la.detach().float().abs().max()))
    if ln.requires_grad: ln.register_hook(lambda g: r.__setitem__('gln_finite', torch.isfinite(g).all()))
    if la.requires_grad: la.register_hook(lambda g: r.__setitem__('gla_finite', torch.isfinite(g).all()))
    return out

def pgd_rec(model, x, *a, **k):
    xa = orig_pgd(model, x, *a, **k)
    r = {}
    recs.append(r)
    with torch.no_grad():
        was = model.training; model.eval()
        le = model(x).float()
        model.train(was)
        r.update(adv_finite=torch.isfinite(xa).all(), adv_linf=(xa - x).abs().max(), adv_mean=(xa - x).abs().mean(),
                 gap_eval=_gap(le), zero_eval=(F.softmax(le, 1) == 0).sum())
    return xa

B.trades_kl, B.trades_pgd = kl_rec, pgd_rec

_step = torch.optim.SGD.step
def sgd_step(self, *a, **k):
    r = recs[-1] if recs else {}
    with torch.no_grad():
        ps = [p for g in self.param_groups for p in g['params']]
        gs = [p.grad for p in ps if p.grad is not None]
        r['grads_finite'] = torch.stack([torch.isfinite(g).all() for g in gs]).all()
        r['grad_norm'] = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.float()) for g in gs]))
        r['params_finite_before'] = torch.stack([torch.isfinite(p).all() for p in ps]).all()
        r['lr'] = torch.tensor(float(self.param_groups[0]['lr']))
    return _step(self, *a, **k)
torch.optim.SGD.step = sgd_step

from swaro_nb.train import Trainer
t0 = time.time()
tr = Trainer(cfg, resume=False)
err = None
try:
    tr.fit()
except Exception as e:
    err = f"{type(e).__name__}: {e}"
dt = time.time() - t0
rows = [{k: (v.item() if isinstance(v, torch.Tensor) else v) for k, v in r.items()} for r in recs]
for i, r in enumerate(rows): r['step'] = i
print(f'finished in {dt:.0f} s; steps recorded {len(rows)}; error: {err}')
print('history:', json.dumps([{k: round(v, 4) if isinstance(v, float) else v for k, v in h.items()} for h in tr.history]))
bad = lambda r: not (r.get('grads_finite', True) and r.get('gln_finite', True) and r.get('gla_finite', True)
                     and math.isfinite(r.get('kl', 0.0)) and r.get('params_finite_before', True) and r.get('adv_finite', True))
first = next((r for r in rows if bad(r)), None)
und = [r['step'] for r in rows if r.get('zero_nat', 0) > 0]
print('steps with natural softmax (train mode) underflowing to 0:', len(und), und[:20])
print('steps with adversarial softmax underflowing:', sum(r.get('zero_adv', 0) > 0 for r in rows),
      ' eval-mode (attack target) underflowing:', sum(r.get('zero_eval', 0) > 0 for r in rows))
fmt = lambda r: ' '.join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items())
if first is not None:
    i = first['step']
    print('FIRST NON-FINITE at step', i)
    for r in rows[max(0, i - 3): i + 2]: print('  ', fmt(r))
else:
    print('no non-finite step')
mx = max(rows, key=lambda r: r.get('gap_nat', 0)) if rows else None
if mx: print('largest natural logit gap:', fmt(mx))
for r in rows[::max(1, len(rows) // 12)]: print('  ', fmt(r))
os.makedirs(os.environ.get('OUT', '/tmp/out'), exist_ok=True)
with open(os.path.join(os.environ.get('OUT', '/tmp/out'), f"probe-{os.path.basename(os.path.abspath(code))}-{mode}.json"), 'w') as f:
    json.dump(dict(err=err, seconds=dt, rows=rows, history=tr.history), f)
