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
