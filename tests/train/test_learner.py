"""Learner and replay buffer.

Invariants covered:
- loss_fn's policy loss equals a plain numpy KL(target || softmax over legal logits) with
  zero-target terms contributing 0, and its value loss equals mean(((v - t) / unit) ** 2);
- the KL is 0 when the target is the model's own masked softmax and positive otherwise;
- illegal logits never matter: changing them leaves the loss and the legal gradients unchanged
  and gives them zero gradient (masking happens before the softmax);
- a few train_steps on a fixed batch lower the loss; train_step returns plain floats;
- make_optimizer builds Adam with the given lr, betas and weight decay;
- ReplayBuffer keeps only the newest max_batches batches; each pass of minibatches covers every
  stored position exactly once (last partial minibatch kept); same rng -> same minibatches.
"""

import numpy as np
import pytest
import torch

from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train.learner import loss_fn, make_optimizer, train_step
from scrofazero.train.replay import ReplayBuffer


def _random_batch(rng, n=16, zero_some=True):
    legal = rng.random((n, 52)) < 0.3
    legal[np.arange(n), rng.integers(0, 52, n)] = True  # at least one legal card per row
    logits = rng.normal(0, 3, (n, 52)).astype(np.float32)
    t = np.where(legal, rng.random((n, 52)), 0.0)
    if zero_some:  # legal cards with zero target must contribute 0, not NaN
        t[:, ::5] = 0.0
        empty = t.sum(1) == 0
        t[empty] = legal[empty]
    t = (t / t.sum(1, keepdims=True)).astype(np.float32)
    batch = {
        "inputs": rng.normal(size=(n, INPUT_SIZE)).astype(np.float32),
        "legal": legal,
        "policy_target": t,
        "value_target": rng.normal(0, 50, n).astype(np.float32),
        "seat": rng.integers(0, 4, n).astype(np.int8),
    }
    value = rng.normal(0, 50, n).astype(np.float32)
    return logits, value, batch


def _numpy_losses(logits, value, batch, value_unit):
    legal, t = batch["legal"], batch["policy_target"].astype(np.float64)
    kl = 0.0
    for i in range(len(t)):
        z = logits[i][legal[i]].astype(np.float64)
        logp = z - z.max() - np.log(np.exp(z - z.max()).sum())
        ti = t[i][legal[i]]
        pos = ti > 0
        kl += np.sum(ti[pos] * (np.log(ti[pos]) - logp[pos]))
    policy = kl / len(t)
    v = np.mean(((value.astype(np.float64) - batch["value_target"]) / value_unit) ** 2)
    return policy, v


def _torch(batch):
    return {k: torch.as_tensor(v) for k, v in batch.items()}


@pytest.mark.parametrize("value_loss,unit", [("mse", 10.0), ("rmse", 1.0), ("rmse", 10.0)])
def test_loss_matches_numpy_reference(value_loss, unit):
    rng = np.random.default_rng(0)
    logits, value, batch = _random_batch(rng)
    total, m = loss_fn(torch.tensor(logits), torch.tensor(value), _torch(batch), 0.03, unit,
                       value_loss)
    policy, v = _numpy_losses(logits, value, batch, unit)
    if value_loss == "rmse":  # the paper's: the root of the mean squared error, in points
        v = np.sqrt(v)
    assert m["loss/policy"].item() == pytest.approx(policy, rel=1e-5)
    assert m["loss/value"].item() == pytest.approx(v, rel=1e-5)
    assert total.item() == pytest.approx(policy + 0.03 * v, rel=1e-5)
    assert np.isfinite(total.item())


def test_rmse_gradient_stays_bounded_when_errors_grow():
    """d RMSE / d value has norm 1 / sqrt(B) per unit whatever the error's size; the MSE's grows
    with the error (why the paper uses the RMSE)."""
    rng = np.random.default_rng(1)
    logits, _, batch = _random_batch(rng)
    grads = {}
    for kind in ("rmse", "mse"):
        for scale in (1.0, 100.0):
            value = torch.tensor(batch["value_target"] + scale * 50.0, requires_grad=True)
            total, _ = loss_fn(torch.tensor(logits), value, _torch(batch), 1.0, 1.0, kind)
            total.backward()
            grads[kind, scale] = value.grad.norm().item()
    assert grads["rmse", 100.0] == pytest.approx(grads["rmse", 1.0], rel=1e-4)
    assert grads["mse", 100.0] > 50 * grads["mse", 1.0]
    with pytest.raises(ValueError, match="value_loss"):
        loss_fn(torch.tensor(logits), value, _torch(batch), 1.0, 1.0, "huber")


def test_kl_zero_at_own_softmax_and_positive_otherwise():
    rng = np.random.default_rng(1)
    logits, value, batch = _random_batch(rng, zero_some=False)
    z = np.where(batch["legal"], logits, -np.inf)
    p = np.exp(z - z.max(1, keepdims=True))
    batch["policy_target"] = (p / p.sum(1, keepdims=True)).astype(np.float32)
    _, m = loss_fn(torch.tensor(logits), torch.tensor(value), _torch(batch))
    assert abs(m["loss/policy"].item()) < 1e-5
    logits2 = logits + rng.normal(0, 1, logits.shape).astype(np.float32)
    _, m2 = loss_fn(torch.tensor(logits2), torch.tensor(value), _torch(batch))
    assert m2["loss/policy"].item() > 1e-3


def test_illegal_logits_never_affect_loss_or_gradients():
    rng = np.random.default_rng(2)
    logits, value, batch = _random_batch(rng)
    legal = batch["legal"]
    results = []
    for scale in (0.0, 1e4):
        lg = logits + np.where(legal, 0.0, scale * rng.normal(size=logits.shape)).astype(np.float32)
        lt = torch.tensor(lg, requires_grad=True)
        total, _ = loss_fn(lt, torch.tensor(value), _torch(batch))
        total.backward()
        results.append((total.item(), lt.grad.numpy().copy()))
    (l0, g0), (l1, g1) = results
    assert l0 == pytest.approx(l1, rel=1e-6)
    np.testing.assert_allclose(g0[legal], g1[legal], rtol=1e-5, atol=1e-8)
    assert np.all(g0[~legal] == 0) and np.all(g1[~legal] == 0)


def test_train_steps_reduce_loss_and_return_floats():
    rng = np.random.default_rng(3)
    torch.manual_seed(0)
    _, _, batch = _random_batch(rng, n=32)
    model = PolicyValueNet(hidden=(64, 32), num_blocks=1)
    opt = make_optimizer(model, lr=1e-3)
    first = train_step(model, opt, batch, "cpu", amp=True)  # amp is ignored on CPU
    assert set(first) == {"loss/policy", "loss/value", "loss/total"}
    assert all(type(v) is float for v in first.values())
    for _ in range(30):
        last = train_step(model, opt, batch, "cpu", amp=None)
    assert last["loss/total"] < 0.5 * first["loss/total"]


def test_make_optimizer_uses_given_settings():
    model = PolicyValueNet(hidden=(8,), num_blocks=0)
    opt = make_optimizer(model, lr=5e-5, betas=(0.3, 0.999), weight_decay=1e-4)
    assert type(opt) is torch.optim.Adam
    g = opt.param_groups[0]
    assert g["lr"] == 5e-5 and tuple(g["betas"]) == (0.3, 0.999) and g["weight_decay"] == 1e-4
    assert sum(p.numel() for p in g["params"]) == sum(p.numel() for p in model.parameters())
    default = make_optimizer(model).param_groups[0]
    assert default["lr"] == 5e-5 and tuple(default["betas"]) == (0.3, 0.999)
    assert default["weight_decay"] == 1e-4


def _ids_batch(start, n):
    """A fake records batch whose inputs[:, 0] is a unique position id."""
    inputs = np.zeros((n, INPUT_SIZE), np.float32)
    inputs[:, 0] = np.arange(start, start + n)
    return {
        "inputs": inputs,
        "legal": np.ones((n, 52), bool),
        "policy_target": np.full((n, 52), 1 / 52, np.float32),
        "value_target": np.arange(start, start + n, dtype=np.float32),
        "seat": np.zeros(n, np.int8),
    }


def test_replay_keeps_latest_batches_only():
    buf = ReplayBuffer(max_batches=3)
    sizes = [5, 7, 11, 13, 17]
    start = 0
    for n in sizes:
        buf.add(_ids_batch(start, n))
        start += n
    assert buf.num_batches == 3 and len(buf) == 11 + 13 + 17
    mbs = buf.minibatches(100, 1, np.random.default_rng(0))
    ids = np.concatenate([b["inputs"][:, 0] for b in mbs])
    assert sorted(ids) == list(range(5 + 7, start))


def test_replay_each_pass_covers_every_position_once():
    buf = ReplayBuffer(max_batches=3)
    buf.add(_ids_batch(0, 50))
    buf.add(_ids_batch(50, 80))
    mbs = list(buf.minibatches(batch_size=64, passes=3, rng=np.random.default_rng(5)))
    assert [len(b["inputs"]) for b in mbs] == [64, 64, 2] * 3
    for p in range(3):
        ids = np.concatenate([b["inputs"][:, 0] for b in mbs[3 * p : 3 * p + 3]])
        assert sorted(ids) == list(range(130))
    # Rows stay aligned across fields, and passes are shuffled differently.
    for b in mbs:
        assert np.array_equal(b["inputs"][:, 0], b["value_target"])
    assert not np.array_equal(mbs[0]["value_target"], mbs[3]["value_target"])


def test_replay_minibatches_deterministic_with_rng():
    buf = ReplayBuffer()
    buf.add(_ids_batch(0, 100))
    a = list(buf.minibatches(32, 2, np.random.default_rng(7)))
    b = list(buf.minibatches(32, 2, np.random.default_rng(7)))
    assert len(a) == len(b) == 8
    for x, y in zip(a, b):
        for k in x:
            assert np.array_equal(x[k], y[k])


def test_auxiliary_loss_matches_a_direct_computation_and_trains():
    rng = np.random.default_rng(4)
    logits, value, batch = _random_batch(rng, n=24)
    batch["points_target"] = rng.normal(0, 60, (24, 4)).astype(np.float32)
    batch["capture_target"] = rng.integers(0, 4, (24, 16)).astype(np.int8)
    points = rng.normal(0, 60, (24, 4)).astype(np.float32)
    capture = rng.normal(0, 2, (24, 16, 4)).astype(np.float32)
    t = _torch(batch)
    plain, _ = loss_fn(torch.as_tensor(logits), torch.as_tensor(value), t)
    total, parts = loss_fn(torch.as_tensor(logits), torch.as_tensor(value), t,
                           aux=(torch.as_tensor(points), torch.as_tensor(capture)),
                           aux_weight=0.5)
    rmse = np.sqrt(np.mean((points.astype(np.float64) - batch["points_target"]) ** 2))
    z = capture.astype(np.float64)
    logp = z - z.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    ce = -np.take_along_axis(logp, batch["capture_target"][..., None].astype(int), -1).mean()
    assert float(parts["loss/aux_points"]) == pytest.approx(rmse, rel=1e-5)
    assert float(parts["loss/aux_capture"]) == pytest.approx(ce, rel=1e-5)
    assert float(total) == pytest.approx(float(plain) + 0.5 * (0.03 * rmse + ce), rel=1e-5)
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(64, 32), num_blocks=1, aux=True)
    opt = make_optimizer(model, lr=1e-3)
    first = train_step(model, opt, batch, "cpu", aux_weight=0.5)
    for _ in range(40):
        last = train_step(model, opt, batch, "cpu", aux_weight=0.5)
    assert last["loss/aux_capture"] < 0.75 * first["loss/aux_capture"]
    # Without the weight (or targets) the auxiliary heads are not trained.
    assert set(train_step(model, opt, batch, "cpu")) == {"loss/policy", "loss/value",
                                                         "loss/total"}
