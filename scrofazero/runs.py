"""The run harness every trainer (Gongzhu, Fish, Tiny Crew) runs under.

It owns what is the same for every game:
- the run folder and its lock (run_lock.py), the temporary files of killed writes removed when
  a run takes the folder (atomic.py), and a fresh start that fails before its first checkpoint
  past step 0 leaving no folder it created behind (`RunFolder`);
- the fresh-or-resume decision (`resume_or_start`): a fresh start refuses a folder that holds a
  run, a resume refuses a checkpoint whose settings differ from the run's declared settings
  (`check_same_settings`, `settings_changes`: every difference is named, unless always
  changeable or allowed by `resume_overrides=[key or group,...]`), and refuses a checkpoint
  without settings;
- the checkpoint envelope (`Envelope`): envelope version, game, settings, step and every global
  random state (python, numpy, torch and CUDA's when in use), around the trainer's own state.
  Each trainer stores it in its file format (`header()`, and `Envelope.read_header` back), so
  the files that other tools read stay what they were; a file written before the envelope
  existed is read by the trainer's legacy reader (no random states: `random` is {});
- logs that rewind to the checkpoint resumed from: lines of the run's jsonl files past its step
  are dropped (and a torn last line), tensorboard events past it are purged; a fresh start
  begins them empty;
- checkpoint writes that fail with a full disk end in one line naming the file
  (`write_torch`, atomic.py), the previous checkpoint kept.

Each trainer supplies its settings, its state (to an envelope and back) and its steps. The
settings every run has, whatever its game, are `TrainRootConfig` (train.py's root; Gongzhu's
run extends it in train/config.py, the side games add their `game` group).
"""

from __future__ import annotations

import dataclasses
import io
import json
import random
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

from scrofazero.atomic import remove_stale_temps, strict_json, write_atomic
from scrofazero.cluster import RayConfig
from scrofazero.run_lock import RunLock
from scrofazero.settings import GameConfig, RunName, Seed, one_of

ENVELOPE_VERSION = 1
HEADER_KEYS = ("version", "game", "settings", "step", "random")

DISTRIBUTED = ("none", "ray")  # how a run (or an evaluation) is spread over processes


@dataclass
class TrainRootConfig:
    """train.py's settings common to every game; a game's run extends it (GongzhuTrainConfig)
    or adds only its `game` group (configs/train_root/ holds the extensions)."""

    game: GameConfig = field(default_factory=GameConfig)  # the game trained
    seed: Seed = 0  # seeds every random decision of the run
    run: RunName = "default"  # run name: checkpoints/<run>/ and runs/<run>/ (tensorboard)
    checkpoint_dir: str = "checkpoints"  # parent folder of run checkpoints
    log_dir: str = "runs"  # parent folder of tensorboard logs
    resume: bool = False  # continue checkpoints/<run>/latest.pt instead of starting anew
    # a new run folder continues this compact state file (train.state_file) exactly, replay aside
    resume_from: str | None = None
    # settings (or groups, e.g. train) that may differ from the checkpoint's on resume
    resume_overrides: list[str] = field(default_factory=list)
    # none: one process (self-play, then learn) | ray: self-play actors and a learner on Ray
    # (train/distributed.py)
    distributed: one_of(*DISTRIBUTED) = "none"  # type: ignore[valid-type]
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line


class RunError(ValueError):
    """A run that cannot start or continue as asked; the message names the file or setting."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file."""


def check_finite(state_dict: dict, where) -> None:
    """CheckpointError naming `where` and the first weight tensor holding a NaN or infinity
    (a diverged network plays nonsense and trains on to nothing)."""
    for name, tensor in state_dict.items():
        if torch.is_tensor(tensor) and tensor.is_floating_point() and not torch.isfinite(
                tensor).all():
            raise CheckpointError(f"{where}: non-finite weights in {name} (a diverged "
                                  "network); use an earlier checkpoint")


@dataclass
class Envelope:
    """A checkpoint as every trainer's file holds it. Invariant: `settings` is plain nested data
    (what `settings_changes` compares); `random` is {} or `random_states()`'s dict; `state` is
    the trainer's own (it alone knows its layout)."""

    game: str
    settings: dict
    step: int
    state: dict = field(default_factory=dict)
    random: dict = field(default_factory=dict)
    version: int = ENVELOPE_VERSION
    path: str = ""

    def header(self) -> dict:
        """The envelope less the trainer's state, as JSON-compatible data."""
        return {"version": self.version, "game": self.game, "settings": self.settings,
                "step": int(self.step), "random": self.random}

    @classmethod
    def read_header(cls, header, state: dict, path, game: str) -> Envelope:
        """The envelope stored as `header` (see header()) around `state`; RunError naming `path`
        when the header is not one of `game`'s."""
        if not isinstance(header, dict) or sorted(header) != sorted(HEADER_KEYS):
            raise RunError(f"{path}: its run header is not {list(HEADER_KEYS)}")
        if header["version"] != ENVELOPE_VERSION:
            raise RunError(f"{path}: run envelope version {header['version']!r}, this code "
                           f"reads {ENVELOPE_VERSION}")
        if header["game"] != game:
            raise RunError(f"{path}: a checkpoint of game {header['game']!r}, not {game!r}")
        if not isinstance(header["settings"], dict) or not isinstance(header["random"], dict):
            raise RunError(f"{path}: run header settings and random must be mappings")
        if not isinstance(header["step"], int) or header["step"] < 0:
            raise RunError(f"{path}: run header step {header['step']!r} is not a count")
        return cls(game=game, settings=header["settings"], step=header["step"], state=state,
                   random=header["random"], path=str(path))


def read_envelope(header, state: dict, path, game: str, *, step: int, legacy_settings: dict,
                  counted: str, stale: Callable[[dict], bool] = lambda settings: False
                  ) -> Envelope:
    """The envelope of a trainer's checkpoint `path` whose run header is `header` (None: a file
    written before the envelope existed) around the trainer's `state`, at the trainer's own
    `step`. A file without a header, or one whose header settings are `stale` (named as an older
    version of the code named them), gets `legacy_settings` (what the file itself says the run's
    settings were); without a header there are no random states. RunError naming `path` when
    the header's step is not `step` (`counted` says what the trainer counts, as the message
    names it, e.g. "the checkpoint's step 3")."""
    if header is None:  # the layout before the run harness
        return Envelope(game, settings=legacy_settings, step=step, state=state, path=str(path))
    envelope = Envelope.read_header(header, state, path, game)
    if stale(envelope.settings):
        envelope.settings = legacy_settings
    if envelope.step != step:
        raise RunError(f"{path}: run header step {envelope.step} differs from {counted}")
    return envelope


def plain_settings(settings) -> dict:
    """A settings dataclass (or mapping) as nested plain data."""
    if dataclasses.is_dataclass(settings) and not isinstance(settings, type):
        return dataclasses.asdict(settings)
    return json.loads(json.dumps(settings))


def random_states() -> dict:
    """Every global random state a trainer may draw from, as JSON-compatible data."""
    version, internal, gauss = random.getstate()
    numpy = np.random.get_state(legacy=False)
    states = {"python": [version, list(internal), gauss],
              "numpy": {**numpy, "state": {"key": numpy["state"]["key"].tolist(),
                                           "pos": int(numpy["state"]["pos"])}},
              "torch": torch.get_rng_state().tolist()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return states


def restore_random(states: dict, path) -> None:
    """Set the global random states of random_states() (absent ones are left as they are);
    RunError naming `path` when they do not fit."""
    try:
        if "python" in states:
            version, internal, gauss = states["python"]
            random.setstate((version, tuple(internal), gauss))
        if "numpy" in states:
            numpy = states["numpy"]
            np.random.set_state({**numpy, "state": {
                "key": np.array(numpy["state"]["key"], dtype=np.uint32),
                "pos": int(numpy["state"]["pos"])}})
        if "torch" in states:
            torch.set_rng_state(torch.tensor(states["torch"], dtype=torch.uint8))
        if "cuda" in states and torch.cuda.is_available():
            torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8)
                                          for s in states["cuda"]])
    except (ValueError, TypeError, KeyError, RuntimeError) as err:
        raise RunError(f"{path}: its random states cannot be restored ({err})") from None


def _flatten(tree, prefix: str = "") -> dict:
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: tree}


def _within(key: str, names: Iterable[str]) -> bool:
    return any(key == name or key.startswith(name + ".") for name in names)


def settings_changes(stored: dict, current: dict, allowed: Iterable[str] = ()) -> list[str]:
    """The settings of `current` that differ from the checkpoint's `stored` ones and are not
    `allowed` (a key, or a group such as `train` allowing all of it), as 'key: stored -> current'
    lines. Keys missing on either side (options added or removed by another version of the
    code) are not differences."""
    allowed = tuple(allowed)
    old, new = _flatten(stored), _flatten(current)
    return [f"{key}: {old[key]!r} -> {new[key]!r}" for key in sorted(set(old) & set(new))
            if not _same(old[key], new[key]) and not _within(key, allowed)]


def _same(a, b) -> bool:
    """Equal settings values; inside lists of dicts (train.schedule's phases) a key one side
    lacks equals None on the other (a phase key added by a later version, unset)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_same(a.get(k), b.get(k)) for k in set(a) | set(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def check_same_settings(envelope: Envelope, settings: dict, always: Iterable[str] = (),
                        overrides: Iterable[str] = ()) -> None:
    """Refuse to continue `envelope` with other `settings` than its own, naming each difference
    that is neither in `always` nor in `overrides` (the user's resume_overrides)."""
    if not envelope.settings:
        raise RunError(f"{envelope.path}: holds no settings, so this run's cannot be checked "
                       "against it; start a new run instead")
    changes = settings_changes(envelope.settings, settings, (*always, *overrides))
    if changes:
        raise RunError(
            f"settings differ from the run's checkpoint {envelope.path} (written by a different "
            "run): " + "; ".join(changes) + ". Continue with the run's own settings, or allow "
            "these changes with resume_overrides=[" + ",".join(c.split(":")[0] for c in changes)
            + "]")


def resume_or_start(path: Path | None, *, resume: bool, load: Callable[[Path], Envelope],
                    settings: dict, always: Iterable[str] = (), overrides: Iterable[str] = (),
                    found: Path | None = None) -> Envelope | None:
    """None for a fresh start, else the checked envelope of checkpoint `path` to continue.
    `found`: the file that shows the folder holds a run (default `path` when it exists); a fresh
    start is refused when there is one, a resume when there is no checkpoint."""
    found = found if found is not None else (path if path is not None and path.exists()
                                             else None)
    if not resume:
        if found is not None:
            raise FileExistsError(f"{found} exists: pass resume=true to continue that run, or "
                                  "choose another run=NAME")
        return None
    if path is None or not path.is_file():
        raise FileNotFoundError(f"resume=true but {path} does not exist")
    envelope = load(path)
    check_same_settings(envelope, settings, always, overrides)
    return envelope


def rewind_jsonl(path: Path, key: str, step: int) -> None:
    """Keep the lines of jsonl file `path` whose record[key] <= step, up to the first line that
    is not a whole record (a write a kill cut short); rewritten atomically when that drops
    anything. A missing file stays missing."""
    if not path.is_file():
        return
    lines = path.read_text().splitlines(keepends=True)
    kept = []
    for line in lines:
        try:
            record = json.loads(line)
            value = record[key]
        except (ValueError, KeyError, TypeError):
            break
        if not line.endswith("\n") or not isinstance(value, (int, float)) or value > step:
            break
        kept.append(line)
    if len(kept) != len(lines):
        write_atomic(path, lambda f: f.write("".join(kept)), mode="w")


def write_torch(path, payload: dict, fsync: bool = True) -> Path:
    """torch.save(payload) at `path`, atomically: serialised in memory first, so that a write
    error (a full disk) is the OSError naming `path` that atomic.write_atomic raises, not
    torch's wrapped one; the previous file is kept."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getvalue()
    return write_atomic(path, lambda f: f.write(data), fsync=fsync)


class RunFolder:
    """`with RunFolder(folder, log_dir, logs={"eval.jsonl": "step"}) as run:` owns a run.

    On entry: the folder is locked (created if missing; a dead owner is reported), temporary
    files of killed writes are removed. `begin(envelope)` then sets the global random states of
    a resumed run, rewinds its jsonl `logs` (name -> the key holding a line's step) to the
    envelope's step (empties them on a fresh start, envelope None) and opens `writer`
    (tensorboard, events past the step purged). The trainer calls `checkpointed(step)` after
    each checkpoint; if the block fails on a fresh run before a checkpoint past step 0, the
    folders this run created are removed (the corrected command needs no resume=true)."""

    def __init__(self, folder, log_dir, logs: Mapping[str, str] | None = None, note=print):
        self.folder, self.log_dir = Path(folder), Path(log_dir)
        self.logs = dict(logs or {})
        self.note = note
        self.writer: SummaryWriter | None = None
        self.resumed = False
        self.last_checkpoint = -1
        self._created = [d for d in (self.folder, self.log_dir) if not d.exists()]
        self._lock = RunLock(self.folder)

    def __enter__(self) -> RunFolder:
        self._lock.acquire()
        try:
            if self._lock.stale is not None:
                self.note(f"note: {self.folder} was left locked by process {self._lock.stale}, "
                          "which is gone; taking it over")
            remove_stale_temps(self.folder)
        except BaseException:
            self._lock.release()
            raise
        return self

    def begin(self, envelope: Envelope | None, writer: bool = True) -> None:
        step = -1 if envelope is None else envelope.step
        if envelope is not None:
            self.resumed = True
            self.last_checkpoint = step
            restore_random(envelope.random, envelope.path)
        for name, key in self.logs.items():
            rewind_jsonl(self.folder / name, key, step)
        if writer:
            self.writer = SummaryWriter(str(self.log_dir), purge_step=step + 1)

    def log(self, name: str, record: dict) -> None:
        """Append `record` as one strict JSON line to jsonl log `name` (one of `logs`)."""
        if name not in self.logs:
            raise KeyError(f"{name} is not a log of this run ({sorted(self.logs)})")
        line = json.dumps(strict_json(record), allow_nan=False) + "\n"
        with open(self.folder / name, "a") as f:
            f.write(line)

    def checkpointed(self, step: int) -> None:
        self.last_checkpoint = max(self.last_checkpoint, int(step))

    def __exit__(self, kind, error, traceback) -> None:
        if self.writer is not None:
            self.writer.close()
        failed_start = kind is not None and not self.resumed and self.last_checkpoint <= 0
        self._lock.release()
        if failed_start:
            for folder in self._created:  # nothing of a failed start stays behind
                shutil.rmtree(folder, ignore_errors=True)
