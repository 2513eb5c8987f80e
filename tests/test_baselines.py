"Baselines from outside: each trains one epoch through the engine, resumes exactly, and hands evaluation a usable encoder."
import json, math
import pytest, torch
from swaro_nb.config import ConfigError
from swaro_nb.optim import lr_at
from swaro_nb.train import train, Trainer
from swaro_nb.baselines import BASELINES, baseline_config
from swaro_nb.contrastive_baselines import SwAV

TINY = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, epochs=1, attack_steps=2, monitor_every=1,
            monitor_bank=100, monitor_test=50, ckpt_every=1, progress=False)

@pytest.mark.parametrize('method', BASELINES)
def test_one_epoch_through_the_engine(tmp_path, method):
    t = train(baseline_config(method, 'smoke', name=method, out_dir=str(tmp_path), **TINY))
    assert t.epoch == 1 and len(t.history) == 1
    rec = t.history[0]
    assert math.isfinite(rec['loss']) and rec['loss'] > 0
    assert 0 <= rec['knn_acc'] <= 100
    s = torch.load(t.dir / 'checkpoint.pt', weights_only=False)
    assert s['epoch'] == 1 and s['config']['method'] == method
    assert set(s['model']) == set(t.net.state_dict())
    sgd = t.method.opts['optimizer'] == 'sgd'
    assert isinstance(t.opt, torch.optim.SGD) == sgd
    assert ('nesterov' in s['opt']['param_groups'][0]) == sgd       # the checkpoint holds the optimiser that trained
    # the method's optimiser runs the engine's schedule: the last step ran at lr_at(last step)
    assert t.opt.param_groups[0]['lr'] == pytest.approx(lr_at(t.step - 1, t.steps_per_epoch, t.cfg))
    run = json.loads((t.dir / 'run.json').read_text())
    assert run['method'] == method and run['epochs_done'] == 1

@pytest.mark.parametrize('method', ['trades', 'swav', 'acl'])
def test_interrupted_and_resumed_equals_uninterrupted(tmp_path, method, monkeypatch):
    "SGD state (trades), SwAV's queue and prototype freeze (queue on), ACL's dual BN: 1 + 1 resumed epochs == 2 epochs, bit for bit."
    if method == 'swav':
        monkeypatch.setattr(SwAV, 'options', {**SwAV.options, 'queue_length': 100, 'epoch_queue_starts': 0})
    kw = {**TINY, 'epochs': 2, 'monitor_every': 0}
    full = train(baseline_config(method, 'smoke', name='full', out_dir=str(tmp_path), **kw))
    part = train(baseline_config(method, 'smoke', name='part', out_dir=str(tmp_path), max_epochs_this_call=1, **kw))
    assert part.epoch == 1
    resumed = train(baseline_config(method, 'smoke', name='part', out_dir=str(tmp_path), **kw))
    assert resumed.epoch == 2
    a, b = full.net.state_dict(), resumed.net.state_dict()
    for k in a: assert torch.equal(a[k], b[k]), k
    assert [r['loss'] for r in full.history] == [r['loss'] for r in resumed.history]
    if method == 'swav':
        assert full.method.queue_filled == 200 and torch.equal(full.method.queue, resumed.method.queue)

def test_unknown_option_is_a_config_error(tmp_path):
    cfg = baseline_config('swav', 'smoke', out_dir=str(tmp_path), **TINY)
    cfg.extra = {'n_protoypes': 10}
    with pytest.raises(ConfigError, match='has no option'):
        Trainer(cfg, resume=False)
    assert not (tmp_path / cfg.name).exists()   # rejected by check_config before anything is written

def test_linear_eval_of_a_baseline_encoder(tmp_path):
    "ACL's evaluation encoder (plain ResNet-18 copy, adversarial BN branch) goes through the library's linear evaluation."
    linear = pytest.importorskip('swaro_nb.linear')
    from swaro_nb.data import load_cifar, balanced_subset
    t = train(baseline_config('acl', 'smoke', name='acl-le', out_dir=str(tmp_path), **{**TINY, 'monitor_every': 0}))
    enc = t.method.encoder(t.net)
    tr, te = load_cifar('cifar10', True), load_cifar('cifar10', False)
    i, j = balanced_subset(tr.labels, 10, 1), balanced_subset(te.labels, 5, 2)
    res = linear.linear_eval(enc, tr.images[i], tr.labels[i], te.images[j], te.labels[j], feat_dim=enc.out_dim, n_classes=10,
                             epochs=2, batch_size=50, device='cpu', progress=False)
    assert 0 <= res.test_acc <= 100 and all(math.isfinite(l) for l in res.train_loss)
    with torch.no_grad(): assert res.model(torch.rand(3, 3, 32, 32)).shape == (3, 10)

def test_trades_kl_gradient_finite_when_natural_probabilities_underflow():
    "A natural logit gap >= ~104 makes float32 softmax exactly 0; kl_div's xlogy backward (torch >= 1.13) then gave NaN gradients (TRADES issue #30)."
    import torch.nn.functional as F
    from swaro_nb.baselines import trades_kl
    ln = torch.tensor([[0., 120., -5., 3.], [1., 2., 3., 4.], [-60., 60., 0., 1.]])
    la = torch.tensor([[0.5, 3., -1., 2.], [0., 2., 1., 4.], [1., 2., 3., 0.]])
    assert (F.softmax(ln, 1) == 0).any()   # the case: some natural probabilities underflow to exactly 0 in float32
    ln32, la32 = ln.clone().requires_grad_(True), la.clone().requires_grad_(True)
    kl = trades_kl(la32, ln32); kl.backward()
    assert torch.isfinite(kl) and torch.isfinite(ln32.grad).all() and torch.isfinite(la32.grad).all()
    # the same loss in float64 (no underflow there): value and both gradients agree
    ln64, la64 = ln.double().requires_grad_(True), la.double().requires_grad_(True)
    ref = F.kl_div(F.log_softmax(la64, 1), F.softmax(ln64, 1), reduction='sum') / 3; ref.backward()
    assert kl.item() == pytest.approx(ref.item(), rel=1e-5, abs=1e-6)
    torch.testing.assert_close(ln32.grad, ln64.grad.float(), rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(la32.grad, la64.grad.float(), rtol=1e-4, atol=1e-6)

def test_trades_step_stays_finite_on_saturated_logits(tmp_path):
    "One TRADES training step through the engine's pieces when the natural softmax saturates: loss and every gradient finite."
    t = Trainer(baseline_config('trades', 'smoke', name='sat', out_dir=str(tmp_path), **TINY), resume=False)
    with torch.no_grad(): t.net.fc.bias.copy_(torch.linspace(-150, 150, t.net.fc.bias.numel()))   # logit gaps of ~300
    idx, x, y = next(t.data.batches(t.cfg.batch_size, torch.Generator().manual_seed(0)))
    with t.amp: loss, stats = t.method.loss(t, idx, x, y)
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(v) for v in stats.values())
    bad = [n for n, p in t.net.named_parameters() if p.grad is not None and not torch.isfinite(p.grad).all()]
    assert not bad, f"non-finite gradients in {bad}"
