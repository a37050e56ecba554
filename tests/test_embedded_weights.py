"""The embedded model's speed-ups must not change what it says: greedy decoding under a grammar gives the tokens of
llama.cpp's whole-vocabulary check, and the converted weights file is made once, atomically, or not at all.

These run the real llama.cpp model (seconds).
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from llama_cpp import LlamaGrammar, LogitsProcessorList

from prefdisco.dialogue.protocol import PROTOCOL_GBNF
from prefdisco.errors import UserError
from prefdisco.models.gguf import resolve_gguf, weights_copy
from prefdisco.models.grammar import schema_to_gbnf
from prefdisco.models.greedy_grammar import GreedyGrammar, applies
from prefdisco.models.llama_cpp import load_model
from prefdisco.models.threads import default_threads
from prefdisco.scoring.judge import CriterionScore

pytestmark = pytest.mark.embedded

JUDGE_LIKE = {
    "type": "object",
    "properties": {
        "c1": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        "c2": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
        "reason": {"type": "string", "maxLength": 80},
    },
    "required": ["c1", "c2", "reason"],
}
PROMPTS = [
    "Grade this answer for clarity (c1) and warmth (c2): 'The sky is blue because air scatters blue light most.'",
    "A student asked how to add fractions and got the reply 'find a common denominator'. Score it.",
    "You are helping someone you have never met. Ask a question or answer: what is 12 times 12?",
]


@pytest.mark.parametrize(
    "grammar_text",
    [schema_to_gbnf(JUDGE_LIKE, 80), schema_to_gbnf(CriterionScore.model_json_schema(), 120), PROTOCOL_GBNF],
    ids=["judge-like", "criterion-score", "ask"],
)
def test_greedy_grammar_chooses_what_the_whole_vocabulary_check_chooses(grammar_text):
    llama = load_model(resolve_gguf("smollm2"), 4096, default_threads(), 0, 0).llama
    grammar = LlamaGrammar.from_string(grammar_text, verbose=False)
    fast_steps = 0
    for prompt in PROMPTS:
        messages = [{"role": "user", "content": prompt}]
        full = llama.create_chat_completion(messages, temperature=0, max_tokens=60, grammar=grammar)
        greedy = GreedyGrammar(llama, grammar)
        try:
            fast = llama.create_chat_completion(
                messages, temperature=0, max_tokens=60, logits_processor=LogitsProcessorList([greedy])
            )
        finally:
            greedy.close()
        assert fast["choices"][0]["message"]["content"] == full["choices"][0]["message"]["content"]
        assert fast["usage"]["completion_tokens"] == full["usage"]["completion_tokens"]
        fast_steps += greedy.steps - greedy.shortlist_checks - greedy.full_checks
    assert fast_steps > 0  # the one-token check did decide some steps


def test_the_provider_takes_the_greedy_path_only_when_it_is_exact():
    model = get_model("prefdisco/smollm2", memoize=False)
    loaded = model.api.loaded
    schema = {"json_schema": JUDGE_LIKE}
    messages = [ChatMessageUser(content=PROMPTS[0])]
    before = loaded.grammar_steps
    asyncio.run(model.generate(messages, config=GenerateConfig(temperature=0.0, max_tokens=40, extra_body=schema)))
    greedy_steps = loaded.grammar_steps - before
    assert greedy_steps > 0
    asyncio.run(model.generate(messages, config=GenerateConfig(temperature=0.7, max_tokens=40, extra_body=schema)))
    assert loaded.grammar_steps - before == greedy_steps  # sampling keeps llama.cpp's own grammar
    assert applies({"temperature": 0}) and not applies({"temperature": 0, "presence_penalty": 0.5})


def test_weights_copy_is_made_once_and_reused(tmp_path):
    packaged = resolve_gguf("smollm2", "packaged")
    copy = weights_copy(packaged, "q8_0", tmp_path)
    assert copy.parent == tmp_path and copy.name.endswith(".Q8_0.gguf")
    assert [p.name for p in tmp_path.iterdir()] == [copy.name]  # no temporary file left behind
    assert copy.stat().st_size > packaged.stat().st_size  # 8 bits a weight against Q4_1's 5
    stamp = copy.stat().st_mtime_ns
    assert weights_copy(packaged, "q8_0", tmp_path) == copy
    assert copy.stat().st_mtime_ns == stamp
    answer = load_model(copy, 2048, default_threads(), 0, 0).llama.create_chat_completion(
        [{"role": "user", "content": "Say hello."}], temperature=0, max_tokens=8
    )
    assert answer["choices"][0]["message"]["content"].strip()


def test_an_unwritable_cache_falls_back_to_the_packaged_file(tmp_path, caplog):
    packaged = resolve_gguf("smollm2", "packaged")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="prefdisco.models.gguf"):
        assert weights_copy(packaged, "q8_0", blocked) == packaged
    assert "could not write a q8_0 copy" in caplog.text
    assert blocked.read_text().startswith("a file")


def test_unknown_weights_is_a_clear_error():
    with pytest.raises(UserError, match="weights='q3': expected one of q8_0, f16, packaged"):
        resolve_gguf("smollm2", "q3")
