"""HERO's inputs reach verl's v1 advantage step (runs in verl's own venv: scripts/verl-check.sh).

End to end on CPU, as far as verl goes without a GPU server: a tiny lab policy built here
generates through an in-process ``LLMServerClient`` (verl's vLLM/SGLang servers need a GPU) that
returns each token's top-10 log-probs; verl's ``agentpost_shell`` agent loop
(``train.verl_agent_loop``) runs two lab tasks in real bwrap sandboxes, four rollouts each;
verl's own ``AgentLoopWorkerTQ._agent_loop_postprocess`` puts the outputs into a real
TransferQueue (local Ray); ``HeroPPOTrainer._compute_advantage`` (``train.verl_trainer``) reads
them back as a ``DataProto`` and writes the advantages; they equal HERO's pure function on the
agent loop's own turn spans, top-k entropies, C_i and groups. A control: stock
``PPOTrainerSync`` on the same queue raises, since its field list has no entropy.
"""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

pytest.importorskip("verl")
tq = pytest.importorskip("transfer_queue")
torch = pytest.importorskip("torch")

from agentpost.sandbox.registry import get_backend  # noqa: E402

BACKEND = get_backend("bwrap")
pytestmark = pytest.mark.skipif(not BACKEND.available(), reason="bubblewrap unavailable")


def _config(tmp_path):
    from importlib import resources

    from omegaconf import OmegaConf

    cfg = OmegaConf.load(resources.files("verl") / "trainer/config/_generated_ppo_trainer.yaml")
    OmegaConf.set_struct(cfg, False)
    cfg.actor_rollout_ref.rollout.prompt_length = 256
    cfg.actor_rollout_ref.rollout.response_length = 512
    cfg.algorithm.adv_estimator = "hero"
    # a random policy resolves nothing (p = 0): with the gate and the clip off, the advantage is
    # λ·(e_i + P_ik), made of exactly the inputs under test (C_i, turn entropies, spans, groups)
    cfg.algorithm.hero = {"lam": 0.5, "gating": False, "clipping": False}
    return cfg


def _policy(tmp_path):
    from agentpost.lab.policy import PolicySize, lab_llama, train_tokenizer
    from agentpost.lab.tasks import write_family
    from agentpost.tasks.loader import load_suite

    write_family(tmp_path / "tasks", seed=3, n_train=2, n_heldout=0, one_slot=True)
    tasks = load_suite(tmp_path / "tasks" / "train")
    texts = [t.instruction for t in tasks] * 20 + ["ls", "head -3 /app/users.csv", "submit"] * 20
    tok = train_tokenizer(texts, 300)
    size = PolicySize(hidden=32, layers=1, heads=2, intermediate=64, max_positions=2048)
    return tasks, tok, lab_llama(tok, seed=0, size=size).eval()


def _server_cls():
    from verl.workers.rollout.llm_server import LLMServerClient
    from verl.workers.rollout.replica import TokenOutput

    class LocalServer(LLMServerClient):
        """verl's server client, answering from a model in this process (top-10 log-probs in
        ``extra_fields``, as a server configured for HERO would return them)."""

        def __init__(self, config, model, eos_id, max_new_tokens=12):
            super().__init__(config, None)
            self.model, self.eos, self.max_new = model, eos_id, max_new_tokens
            self.gen = torch.Generator().manual_seed(0)

        async def generate(self, request_id, *, prompt_ids, sampling_params, **kw):
            ids, lps, tops = [], [], []
            ctx = list(prompt_ids)
            with torch.no_grad():
                for _ in range(self.max_new):
                    logits = self.model(torch.tensor([ctx])).logits[0, -1].float()
                    logp = torch.log_softmax(logits, -1)
                    t = int(torch.multinomial(logp.exp(), 1, generator=self.gen))
                    ids.append(t)
                    lps.append(float(logp[t]))
                    tops.append(torch.topk(logp, 10).values.tolist())
                    ctx.append(t)
                    if t == self.eos:
                        break
            return TokenOutput(token_ids=ids, log_probs=lps, extra_fields={"top_logprobs": tops})

    return LocalServer


def _ray_init(ray, tries: int = 3) -> None:
    """A local Ray; on a loaded 2-core machine its raylet can miss Ray's fixed 30 s startup
    window ("timed out during startup"), so that one failure is retried (it is not under test)."""
    for attempt in range(tries):
        try:
            ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
            return
        except Exception as e:  # noqa: BLE001  ray raises a bare Exception here
            ray.shutdown()
            if "timed out during startup" not in str(e) or attempt == tries - 1:
                raise


def _actor_pass(model, rows, keys):
    """The v1 trainer's ``_compute_old_log_prob`` writes ``old_log_probs`` and ``entropy`` (full
    vocabulary) per response token before the advantage step; the actor workers need a GPU
    engine, so the same two quantities come from the same model's forward pass here."""
    from verl.utils.tensordict_utils import list_of_dict_to_tensordict

    fields = []
    with torch.no_grad():
        for _, _, o in rows:
            ids = torch.tensor([o.prompt_ids + o.response_ids])
            logp = torch.log_softmax(model(ids).logits[0].float(), -1)
            n, p = len(o.response_ids), len(o.prompt_ids)
            lp = logp[p - 1 : p - 1 + n]
            fields.append({"old_log_probs": lp.gather(1, ids[0, p:, None])[:, 0],
                           "entropy": -(lp.exp() * lp).sum(-1)})  # fmt: skip
    tq.kv_batch_put(keys=keys, partition_id="train", fields=list_of_dict_to_tensordict(fields))


def test_hero_inputs_reach_the_v1_advantage_step(tmp_path):
    import ray
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap
    from verl.trainer.ppo.v1 import AgentLoopWorkerTQ, PPOTrainerSync
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from agentpost.hero.config import HeroConfig
    from agentpost.train import verl_agent_loop, verl_trainer
    from agentpost.train.verl_hero import hero_from_tensors, register

    cfg = _config(tmp_path)
    ev = asyncio.new_event_loop()
    asyncio.set_event_loop(ev)
    tasks, tok, model = _policy(tmp_path)
    loop_cls = verl_agent_loop.register()
    server = _server_cls()(cfg, model, tok.eos_token_id)
    loop = loop_cls(trainer_config=DictConfigWrap(cfg), server_manager=server, tokenizer=tok,
                    processor=None, dataset_cls=RLHFDataset, data_config=DictConfigWrap(cfg.data))  # fmt: skip
    rows = []
    for g, task in enumerate(tasks):
        info = {"env": "agentpost.lab.verl_env:lab_env", "max_turns": 3,
                "env_args": {"task_dir": str(task.path)}}  # fmt: skip
        for s in range(4):
            out = ev.run_until_complete(loop.run({"temperature": 1.0}, extra_info=info))
            rows.append((f"uid{g}", s, out))
    for _, _, out in rows:  # the agent loop's HERO fields are there and aligned
        n = len(out.response_ids)
        assert len(out.hero_token_entropy) == len(out.response_mask) == n
        gen = [h for h, m in zip(out.hero_token_entropy, out.response_mask, strict=True) if m]
        assert gen and all(0 <= h <= math.log(10) + 1e-6 for h in gen)
        assert out.hero_total_tokens > n

    _ray_init(ray)
    try:
        tq.init(OmegaConf.create({"backend": {"SimpleStorage": {"num_data_storage_units": 1}}}))
        worker = object.__new__(AgentLoopWorkerTQ.__ray_metadata__.modified_class)
        worker.config, worker.processor = cfg, None
        worker.reward_loop_worker_handles, worker.distillation_enabled = None, False
        for uid, s, out in rows:
            kw = {"uid": uid, "session_id": s, "global_steps": 1, "raw_prompt": []}
            ev.run_until_complete(worker._agent_loop_postprocess(out, False, **kw))
        keys = [f"{uid}_{s}_0" for uid, s, _ in rows]
        _actor_pass(model, rows, keys)  # what the v1 trainer's old-log-prob step writes
        listed = tq.kv_list(partition_id="train")["train"]  # keys and tags, as the buffer has them
        batch = tq.KVBatchMeta(keys=keys, tags=[listed[k] for k in keys], partition_id="train")
        register()  # the estimator is registered; stock v1 cannot hand it its inputs
        stock = object.__new__(PPOTrainerSync)
        stock.config = cfg
        with pytest.raises(ValueError, match="hero_token_entropy"):
            stock._compute_advantage(batch, {})
        trainer = object.__new__(verl_trainer.register())
        trainer.config = cfg
        metrics: dict = {}
        trainer._compute_advantage(batch, metrics)
        got = tq.kv_batch_get(keys=keys, partition_id="train", select_fields=["advantages"])
        adv = [np.asarray(a) for a in got["advantages"].unbind()]
    finally:
        tq.close()
        ray.shutdown()
        ev.close()

    length = max(len(o.response_ids) for _, _, o in rows)
    mask = np.zeros((len(rows), length))
    ent = np.zeros((len(rows), length))
    rew = np.zeros((len(rows), length))
    for i, (_, _, o) in enumerate(rows):
        n = len(o.response_ids)
        mask[i, :n], ent[i, :n] = o.response_mask, o.hero_token_entropy
        rew[i, n - 1] = o.reward_score
    expected = hero_from_tensors(rew, mask, np.array([u for u, _, _ in rows], dtype=object),
                                 token_entropy=ent * mask,
                                 total_tokens=np.array([o.hero_total_tokens for _, _, o in rows]),
                                 hero=HeroConfig(lam=0.5, gating=False, clipping=False))  # fmt: skip
    for i, (_, _, o) in enumerate(rows):
        n = len(o.response_ids)
        assert np.allclose(adv[i], expected[i, :n], atol=1e-5), (i, adv[i], expected[i, :n])
    assert metrics["hero/mean_total_tokens"] == pytest.approx(
        np.mean([o.hero_total_tokens for _, _, o in rows]), rel=1e-6
    )
    assert any(np.abs(a).sum() > 0 for a in adv)


def test_the_gpu_run_overrides_fit_verls_config_schema(tmp_path):
    """``lab.verl_run`` (the verl step of scripts/lab-gpu.sh) writes a dataset verl reads and
    overrides that verl's own hydra config accepts (every key exists; the run needs a GPU)."""
    from importlib import resources

    import pyarrow.parquet as pq
    from hydra import compose, initialize_config_dir

    from agentpost.lab import verl_run
    from agentpost.lab.tasks import write_family

    write_family(tmp_path / "tasks", seed=1, n_train=3, n_heldout=2, one_slot=True)
    paths = verl_run.write_dataset(tmp_path)
    rows = pq.read_table(paths["train"]).to_pylist()
    assert len(rows) == 3 and rows[0]["agent_name"] == "agentpost_shell"
    assert rows[0]["extra_info"]["env"] == verl_run.ENV
    conf_dir = str(resources.files("verl") / "trainer" / "config")
    with initialize_config_dir(config_dir=conf_dir, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=verl_run.overrides(tmp_path))
    assert cfg.algorithm.adv_estimator == "hero"
    assert cfg.trainer.v1.trainer_mode == "agentpost_hero"
    assert cfg.actor_rollout_ref.rollout.agent.default_agent_loop == "agentpost_shell"
