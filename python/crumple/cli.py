"""The ``crumple`` command line: ``info``, ``scenes``, ``run``, ``sweep``, ``view``, ``render``, ``demo``.

Parsing is argparse (standard library); progress bars are tqdm.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__, _core
from .backend import info
from .errors import CrumpleError, InvalidInputError

__all__ = ["main", "info"]


def _cmd_info(args: argparse.Namespace) -> int:
    d = info()
    if args.json:
        print(json.dumps(d, indent=2))
        return 0
    print(f"crumple {d['version']}")
    print(f"CPU threads: {d['threads']}")
    a = d["gpu_adapter"]
    if isinstance(a, dict):
        print(f"GPU adapter: {a['name']} ({a['device_type']}, {a['backend']}, driver {a['driver']})")
    else:
        print(f"GPU adapter: none ({d['gpu_unavailable_reason']})")
    return 0


def _cmd_scenes(args: argparse.Namespace) -> int:
    from . import scenefile, scenes

    if args.out and not args.export:
        raise InvalidInputError("scenes --out FILE writes an exported scene: give --export NAME with it")
    if args.schema:
        print(json.dumps(scenefile.schema(), indent=1))
        return 0
    if args.export:
        text = scenefile.export(args.export, args.out)
        if args.out:
            print(f"wrote {args.out}")
        else:
            print(text)
        return 0
    names = scenes.names()
    if not names:
        print("no built-in scenes yet")
        return 0
    for n in names:
        print(f"{n:24s} {scenes.describe(n)}")
    return 0


# The keywords `scenes.run` takes besides a scene's own options.
_RUN_KEYS = ("frames", "backend", "scale", "progress", "format", "checkpoint")


def _options(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings as scene options; values are read as JSON when
    they parse (numbers, true/false, null, lists) or as Python's ``True``,
    ``False``, ``None``, ``inf`` and ``-inf``, and kept as text otherwise."""
    from ._sweep import parse_value

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--set expects KEY=VALUE; got {item!r}")
        out[key] = parse_value(value)
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    from . import scenes

    t0 = time.perf_counter()
    if args.scene.endswith(".toml") or Path(args.scene).is_file():
        from . import scenefile

        given = [f for f, on in (("--frames", args.frames is not None), ("--backend", args.backend != "auto"),
                                 ("--scale", args.scale != 1.0), ("--set", bool(args.set)),
                                 ("--format", args.format != "ply"), ("--video", args.video)) if on]
        if given:
            raise InvalidInputError(f"{', '.join(given)} do not apply to a scene file: set them in the file "
                                    "(frames, scale, backend, [options], [output] format)")

        out = scenefile.run(args.scene, out_dir=args.out if args.out != "out" else None, progress=True)
        print(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
        return 0
    opts = _options(args.set)
    flagged = sorted(k for k in opts if k in _RUN_KEYS and k != "checkpoint")
    if flagged:
        raise InvalidInputError(f"--set {flagged[0]}=... is a run setting: give it as --{flagged[0]}")
    if opts and args.scene in scenes.names():
        from . import scenefile

        # (`checkpoint` has no flag: --set checkpoint=true writes the final state.)
        scenefile.check_options(args.scene, {k: v for k, v in opts.items() if k not in _RUN_KEYS})
    out = scenes.run(args.scene, out_dir=Path(args.out), frames=args.frames, backend=args.backend,
                     scale=args.scale, progress=True, format=args.format, **opts)
    stream = out.parent / f"{args.scene}.usdc" if args.format == "usd" else out
    print(f"wrote {out} ({args.format} frames: {stream}) in {time.perf_counter() - t0:.1f} s")
    if args.video:
        from . import viz

        movie = viz.render_video(stream, out / f"{args.scene}.mp4", progress=True)
        print(f"wrote {movie}")
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from . import scenes
    from ._sweep import parse_grid, sweep

    if args.scene is None:
        # `--ray` takes an optional address, so `sweep --ray SCENE ...` reads
        # SCENE as the address: a built-in scene's name there is the scene.
        if args.ray and args.ray in scenes.names():
            args.scene, args.ray = args.ray, ""
        else:
            raise InvalidInputError("a sweep needs a scene: crumple sweep SCENE --grid KEY=V1,V2 ...")
    if not args.grid:
        raise InvalidInputError("a sweep needs at least one --grid KEY=V1,V2,...")
    opts = _options(args.set)
    grid = parse_grid(args.grid)
    if args.scene in scenes.names():
        # Every grid value beside the fixed options, before the first run
        # (the keys `scenes.run` takes itself, such as scale, go to it as
        # they are).
        from . import scenefile

        fixed = {k: v for k, v in opts.items() if k not in _RUN_KEYS}
        scenefile.check_options(args.scene, fixed, *({**fixed, k: v} for k, vs in grid.items() for v in vs
                                                      if k not in _RUN_KEYS),
                                given_as="--set and --grid")
    if args.scale is not None:
        opts["scale"] = args.scale
    r = sweep(args.scene, grid, out=Path(args.out), executor="ray" if args.ray is not None else "local",
              address=args.ray or None, workers=args.workers, threads=args.threads, frames=args.frames,
              options=opts, progress=True)
    ok = len(r.rows) - len(r.failed)
    print(f"{len(r.rows)} runs ({r.skipped} finished before, {ok} ok, {len(r.failed)} failed) in {r.wall_s:.1f} s")
    print(f"wrote {r.csv}" + (f" and {r.parquet}" if r.parquet else " (pip install pyarrow for Parquet)"))
    for row in r.failed:
        print(f"  failed {row['run']}: {row['error']}", file=sys.stderr)
    return 1 if r.failed else 0


def _cmd_view(args: argparse.Namespace) -> int:
    from . import io, viz

    run = io.open_run(args.run)
    k = -1 if args.frame is None else args.frame
    if args.screenshot:
        print(viz.screenshot_run(run, args.screenshot, frame=k))
    else:
        viz.view_run(run, frame=k)
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from . import io, viz

    run = io.open_run(args.run)
    t0 = time.perf_counter()
    out = viz.render_video(run, args.out, fps=args.fps, progress=True)
    print(f"wrote {out} ({run.num_frames} frames) in {time.perf_counter() - t0:.1f} s")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(Path(args.out))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``crumple`` command."""
    p = argparse.ArgumentParser(prog="crumple", description="crumple: cloth, hair, sand and goo that keep their shape")
    p.add_argument("--version", action="version", version=f"crumple {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("info", help="version, CPU threads, GPU adapter")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(fn=_cmd_info)

    s = sub.add_parser("scenes", help="list the built-in scenes; write one as a scene file; print the schema")
    s.add_argument("--export", metavar="NAME", help="write scene NAME as a TOML scene file (stdout or --out)")
    s.add_argument("--out", metavar="FILE", help="where --export writes")
    s.add_argument("--schema", action="store_true", help="print the scene files' JSON Schema")
    s.set_defaults(fn=_cmd_scenes)

    s = sub.add_parser("run", help="run a built-in scene or a scene file (.toml) and write its frames")
    s.add_argument("scene", help="a built-in scene's name (crumple scenes) or a scene file")
    s.add_argument("--frames", type=int, default=None, help="number of frames (default: the scene's)")
    s.add_argument("--out", default="out", help="output folder (default: out)")
    s.add_argument("--backend", default="auto", choices=["auto", "cpu", "gpu"])
    s.add_argument("--scale", type=float, default=1.0, help="size knob toward the paper's resolution")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a scene option, e.g. --set hold=immediate --set material=denim (repeatable)")
    s.add_argument("--format", default="ply", choices=["ply", "usd"],
                   help="frame stream: ply (OUT/SCENE/*.ply + manifest.json, default) or usd (OUT/SCENE.usdc)")
    s.add_argument("--video", action="store_true", help="also render the run to OUT/SCENE/SCENE.mp4")
    s.set_defaults(fn=_cmd_run)

    s = sub.add_parser("sweep", help="run a built-in scene over a parameter grid (local processes or Ray)")
    s.add_argument("scene", nargs="?", metavar="SCENE",
                   help="a built-in scene's name (crumple scenes); required (it may also come right after --ray)")
    s.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2",
                   help="a swept option and its values, e.g. --grid hold_time=0,200 --grid friction=0,0.5 "
                        "(repeatable: every combination runs)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="an option for every run (repeatable)")
    s.add_argument("--out", default="out/sweep", help="output folder (default: out/sweep); a rerun resumes")
    s.add_argument("--frames", type=int, default=None, help="frames per run (default: the scene's)")
    s.add_argument("--scale", type=float, default=None, help="the scene's size knob for every run")
    s.add_argument("--workers", type=int, default=None, help="runs at once (default: one per core locally)")
    s.add_argument("--threads", type=int, default=None, help="solver threads per run")
    s.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="run on Ray: alone, a local Ray (or RAY_ADDRESS); with ADDRESS, join that cluster "
                        "(a built-in scene's name there is read as SCENE)")
    s.set_defaults(fn=_cmd_sweep)

    s = sub.add_parser("view", help="look at a written run: a timeline with play/pause and a frame slider")
    s.add_argument("run", metavar="DIR_OR_USD", help="a run folder (with manifest.json) or a .usd/.usdc/.usda file")
    s.add_argument("--screenshot", metavar="PNG", help="render one frame to a PNG instead of opening a window")
    s.add_argument("--frame", type=int, default=None, metavar="K",
                   help="the frame to start at or render (default: the last; negative counts from the end)")
    s.set_defaults(fn=_cmd_view)

    s = sub.add_parser("render", help="render every frame of a written run into an mp4 or gif")
    s.add_argument("run", metavar="DIR_OR_USD", help="a run folder (with manifest.json) or a .usd/.usdc/.usda file")
    s.add_argument("--out", required=True, metavar="VIDEO", help="movie.mp4 or movie.gif")
    s.add_argument("--fps", type=float, default=None, help="frames per second (default: the run's)")
    s.set_defaults(fn=_cmd_render)

    s = sub.add_parser("demo", help="run the default demo and write frames and a picture under out/")
    s.add_argument("--out", default="out/demo")
    s.set_defaults(fn=_cmd_demo)

    args = p.parse_args(argv)
    try:
        return int(args.fn(args))
    except CrumpleError as e:
        print(f"crumple: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
