"""Fits the suggestion calibration (apps/api/src/suggest/abstain.ts PLATT): Platt scaling of the reranker.

Input: the file `npm run bench -- suggest --explain <file>` writes (one message a line: its reranked
candidates with their evidence and whether each is relevant). Label: the candidate is a skill that helps.
Fitted on one half of the messages (even positions), reported on both halves, so the held-out figures
show what the fit is worth on messages it did not see. Pure Python: no package to install.
"""
import json, math, sys

FEATURES = ["rerank"]
# apps/api/src/suggest/abstain.ts RERANK
RERANK = {"coverage": 2, "topical": 3, "topicalIdf": 0.6, "allIdf": 0.2, "fused": 2, "agreement": 0.5}

def row(c):
    r = (RERANK["coverage"] * c["coverage"] + RERANK["topical"] * c["topical"]
         + RERANK["topicalIdf"] * math.log1p(c["topicalIdf"]) + RERANK["allIdf"] * math.log1p(c["allIdf"])
         + RERANK["fused"] * c["fused"] + (RERANK["agreement"] if c["agreement"] else 0))
    return [r]

def fit(samples, epochs=3000, lr=0.1, l2=1e-3):
    w = [0.0] * (len(FEATURES) + 1)
    n = len(samples)
    for _ in range(epochs):
        g = [0.0] * len(w)
        for x, y in samples:
            z = w[-1] + sum(a * b for a, b in zip(w, x))
            p = 1 / (1 + math.exp(-z))
            for i, v in enumerate(x):
                g[i] += (p - y) * v
            g[-1] += p - y
        for i in range(len(w)):
            w[i] -= lr * (g[i] / n + (l2 * w[i] if i < len(w) - 1 else 0))
    return w

def score(w, c):
    z = w[-1] + sum(a * b for a, b in zip(w, row(c)))
    return 1 / (1 + math.exp(-z))

def evaluate(w, messages, threshold):
    none = [m for m in messages if m["kind"] == "none"]
    others = [m for m in messages if m["kind"] != "none"]
    best = lambda m: max([score(w, c) for c in m["candidates"]] or [0])
    top = lambda m: max(m["candidates"], key=lambda c: score(w, c), default=None)
    s1 = sum(1 for m in others if best(m) >= threshold and top(m) and top(m)["relevant"]) / max(1, len(others))
    return {
        "abstention on none": round(sum(1 for m in none if best(m) < threshold) / max(1, len(none)), 3),
        "false abstention": round(sum(1 for m in others if best(m) < threshold) / max(1, len(others)), 3),
        "success@1": round(s1, 3),
        "messages": len(messages),
    }

messages = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
train = messages[0::2]
held = messages[1::2]
samples = [(row(c), 1.0 if c["relevant"] else 0.0) for m in train for c in m["candidates"]]
w = fit(samples)
print("CALIBRATION", {f: round(v, 3) for f, v in zip(FEATURES + ["bias"], w)})
for t in [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5]:
    print(t, "train", evaluate(w, train, t), "held out", evaluate(w, held, t))

# The task prior (apps/api/src/suggest/abstain.ts TASK_PRIOR, ABSTAIN_BELOW): a message's best score is its
# best calibrated candidate times the prior its wording earns (small talk and messages with no informative
# word: 0; no request: TASK_PRIOR.noRequest; a request: 1). The no-request prior and the threshold are
# chosen on the training half (most abstention on kind none with false abstention at most 0.05 there) and
# reported on the held-out half.
PLATT = {"scale": 0.81, "bias": -6.16}

def raw_best(m):
    return max([1 / (1 + math.exp(-(PLATT["scale"] * row(c)[0] + PLATT["bias"]))) for c in m["candidates"]] or [0])

def prior(m, no_request):
    t = m.get("task")
    if not t:  # no content word at all: abstains before any skill is scored
        return 0.0
    if t["smallTalk"] or t["informative"] == 0:
        return 0.0
    return 1.0 if t["request"] else no_request

def rates(ms, no_request, threshold):
    none = [m for m in ms if m["kind"] == "none"]
    others = [m for m in ms if m["kind"] != "none"]
    below = lambda m: raw_best(m) * prior(m, no_request) < threshold
    return (round(sum(map(below, none)) / max(1, len(none)), 3), round(sum(map(below, others)) / max(1, len(others)), 3))

if any("task" in m for m in messages):
    grid = [(p / 10, t / 100) for p in range(3, 11) for t in range(6, 31)]
    ok = [(rates(train, p, t), p, t) for p, t in grid]
    ok = [x for x in ok if x[0][1] <= 0.05]
    (tr, p, t) = max(ok, key=lambda x: (x[0][0], -x[0][1], x[2]))
    print("TASK PRIOR no request", p, "threshold", t, "train (none, false)", tr, "held out (none, false)", rates(held, p, t))
    print("curve at that prior (threshold: train none/false | held-out none/false)")
    for tt in [0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3]:
        print(" ", tt, rates(train, p, tt), "|", rates(held, p, tt))
    print("without the task signal (prior 1 everywhere, threshold: held-out none/false):",
          [(tt, rates([dict(m, task={"smallTalk": False, "informative": 1, "request": True}) for m in held], 1, tt)) for tt in [0.12, 0.2, 0.25]])
