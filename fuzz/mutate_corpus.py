#!/usr/bin/env python3
"""Seeded mutation campaign: mutants of the public model corpus through the
kiln CLI, counting crashes, hangs and aborts.

  fuzz/mutate_corpus.py --kiln build/bin/kiln [--models ../shared/models]
                        [--mutants 1200] [--seed 1] [--timeout 5]
                        [--memory-gb 4] [--out DIR] [--max-model-kb 4096]

Each mutant (a model of the corpus with one to four mutations: bit flips,
random bytes, interesting 32-bit values written at aligned offsets, which
is where FlatBuffers keeps offsets, lengths, shapes and indices, chunks
duplicated or deleted, truncation) goes through `kiln inspect` and
`kiln run --input random`, each with a wall-clock limit (--timeout
seconds) and an address-space limit (--memory-gb). Outcomes per command:

  ok      exit 0 (counted again under "ok_and_accepted"), or exit 1 with
          an error (the model was refused)
  crash   killed by a signal other than SIGABRT (SIGSEGV, SIGBUS, ...)
  abort   SIGABRT, or an uncaught C++ exception / std::bad_alloc
          ("terminate called"), i.e. an allocation or logic abort
  hang    still running after --timeout seconds
  other   any other exit code

Models whose unmutated file already fails or exceeds the limits (one that
honestly needs more than --timeout seconds here) are not mutated; they are
listed under "not_mutated".

Every mutant that does not end "ok" is written to --out with its command's
output, so it can be replayed (and added to fuzz/regressions/model/).
The same --seed gives the same mutants. Exit 0 when nothing but "ok"
happened, 1 otherwise, 77 when the corpus or the kiln binary is missing.
"""
import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time

INTERESTING32 = [0, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
                 0x10000, 0x40000000, 0x7fffffff, 0x80000000, 0xffffffff,
                 0xfffffffe, 0x3fffffff]


def models_of(root, max_kb):
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith((".tflite", ".bin")):
                p = os.path.join(d, f)
                if os.path.getsize(p) <= max_kb * 1024:
                    out.append(p)
    return sorted(out)


def mutate(data, rng):
    b = bytearray(data)
    what = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["flip", "byte", "int32", "int32", "int32",
                           "dup", "delete", "truncate"])
        if not b:
            break
        if kind == "flip":
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif kind == "byte":
            for _ in range(rng.randint(1, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == "int32" and len(b) >= 4:
            # Aligned: FlatBuffers offsets, vector lengths and scalars.
            i = rng.randrange(len(b) // 4) * 4
            v = rng.choice(INTERESTING32)
            if rng.random() < 0.3:
                v = (int.from_bytes(b[i:i + 4], "little") +
                     rng.choice([-1, 1, 2, 16, -16])) & 0xffffffff
            b[i:i + 4] = v.to_bytes(4, "little")
        elif kind == "dup":
            i = rng.randrange(len(b))
            n = rng.randint(1, 64)
            b[i:i] = b[i:i + n]
        elif kind == "delete":
            i = rng.randrange(len(b))
            del b[i:i + rng.randint(1, 64)]
        elif kind == "truncate":
            del b[rng.randrange(len(b)):]
        what.append(kind)
    return bytes(b), what


def limit_memory(gb):
    def apply():
        limit = gb * (1 << 30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.setsid()
    return apply


def classify(rc, stderr, timed_out):
    if timed_out:
        return "hang"
    if rc < 0:
        return "abort" if -rc == signal.SIGABRT else "crash"
    if "terminate called" in stderr or "std::bad_alloc" in stderr:
        return "abort"
    if rc in (0, 1):
        return "ok"
    return "other"


def run(cmd, timeout, gb):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=limit_memory(gb))
    try:
        out, err = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        timed_out = True
    err = err.decode("utf-8", "replace")
    return classify(p.returncode, err, timed_out), p.returncode, err


def commands_for(model, seed, work):
    return [("inspect", ["inspect", model]),
            ("run", ["run", model, "--input", "random", "--seed", str(seed),
                     "--output-dir", os.path.join(work, "out")])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--models", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
        "models"))
    ap.add_argument("--mutants", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--memory-gb", type=int, default=4)
    ap.add_argument("--max-model-kb", type=int, default=4096)
    ap.add_argument("--out", default="mutation-findings")
    ap.add_argument("--kiln-arg", action="append", default=[],
                    help="extra argument for every kiln command")
    a = ap.parse_args()
    if not os.access(a.kiln, os.X_OK):
        print("SKIP: no kiln binary at %s" % a.kiln)
        return 77
    corpus = models_of(a.models, a.max_model_kb) if os.path.isdir(
        a.models) else []
    if not corpus:
        print("SKIP: no models under %s" % a.models)
        return 77
    # The unmutated models first: one that already fails or exceeds the
    # limits (a model that honestly needs more than --timeout seconds on
    # this machine) would make every mutant of it a false finding.
    os.makedirs(a.out, exist_ok=True)
    baseline_failures = {}
    with tempfile.TemporaryDirectory() as work:
        for source in corpus:
            for command, args in commands_for(source, 0, work):
                outcome, rc, err = run([a.kiln] + args + a.kiln_arg,
                                       a.timeout, a.memory_gb)
                if outcome != "ok":
                    baseline_failures[os.path.relpath(source, a.models)] = (
                        "%s %s (exit %s): %s" % (command, outcome, rc,
                                                 err.strip()[-300:]))
                    break
    for model, why in sorted(baseline_failures.items()):
        print("not mutated, the original does not pass: %s: %s" % (model,
                                                                   why))
    corpus = [m for m in corpus
              if os.path.relpath(m, a.models) not in baseline_failures]
    rng = random.Random(a.seed)
    counts = {c: {k: 0 for k in ["ok", "crash", "abort", "hang", "other"]}
              for c in ["inspect", "run"]}
    # Of the "ok": how many the command accepted (exit 0) and refused (1).
    accepted = {c: 0 for c in counts}
    findings = []
    start = time.time()
    with tempfile.TemporaryDirectory() as work:
        for n in range(a.mutants):
            source = rng.choice(corpus)
            with open(source, "rb") as f:
                data, what = mutate(f.read(), rng)
            path = os.path.join(work, "mutant.tflite")
            with open(path, "wb") as f:
                f.write(data)
            for command, args in commands_for(path, n, work):
                outcome, rc, err = run([a.kiln] + args + a.kiln_arg,
                                       a.timeout, a.memory_gb)
                counts[command][outcome] += 1
                if outcome == "ok" and rc == 0:
                    accepted[command] += 1
                if outcome != "ok":
                    name = "%s-%s-%05d.tflite" % (outcome, command, n)
                    with open(os.path.join(a.out, name), "wb") as f:
                        f.write(data)
                    findings.append({"mutant": n, "command": command,
                                     "outcome": outcome, "exit": rc,
                                     "source": os.path.relpath(source,
                                                               a.models),
                                     "mutations": what, "file": name,
                                     "stderr": err[-2000:]})
                    print("%-6s %-7s mutant %d of %s (exit %s): %s" %
                          (outcome, command, n, os.path.basename(source), rc,
                           err.strip().splitlines()[-1:] or ""))
                    sys.stdout.flush()
            if (n + 1) % 100 == 0:
                print("%d/%d mutants, %.0f s" % (n + 1, a.mutants,
                                                 time.time() - start))
                sys.stdout.flush()
    summary = {"seed": a.seed, "mutants": a.mutants, "corpus_models":
               len(corpus), "not_mutated": baseline_failures,
               "timeout_s": a.timeout, "memory_gb": a.memory_gb,
               "seconds": round(time.time() - start, 1), "counts": counts,
               "ok_and_accepted": accepted,
               "findings": findings}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "findings"},
                     indent=1))
    bad = sum(v for c in counts.values() for k, v in c.items() if k != "ok")
    print("%d non-ok outcome(s); details in %s/summary.json" % (bad, a.out))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
