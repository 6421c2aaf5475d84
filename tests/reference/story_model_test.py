"""The shipped story model (assets/models/story) is what the README's command makes and meets the
goals of issue 24: the folder is under 10 MB and opens (config, weights, tokenizer, story_grammar.json
with the four lists); its tokenizer makes the seeds' sentence one token per word; its summary.json
(written by the command, measured on held-out stories) has a head whose adjective_noun score is at least
0.5, one whose pronoun_antecedent score is at least 0.5, an induction head at least twice chance, and at least
90 % grammatical sentences written greedily and at T = 0.8; the scene assets/scenes/story.json opens it
on the seeds' sentence at a head whose adjective_noun score is at least 0.5. Re-running the README's
command reproduces model.safetensors, config.json and metrics.csv byte for byte (the run is on one
thread; like induction-2l's, the bytes are those of the CPU kind the README names).

usage: story_model_test.py path/to/attnviz
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shipped_ref import ROOT, assert_same_bytes, rerun_readme_command  # noqa: E402

ATTNVIZ = sys.argv[1]
MODEL = os.path.join(ROOT, "assets", "models", "story")
SEEDS = "a fluffy blue creature roamed the verdant forest"


def best(summary, score):
    return max(h[score] for layer in summary["head_scores"] for h in layer)


def main():
    size = sum(os.path.getsize(os.path.join(MODEL, n)) for n in os.listdir(MODEL))
    assert size <= 10 << 20, f"the shipped story model is {size} bytes (must stay within 10 MB)"
    with open(os.path.join(MODEL, "story_grammar.json"), encoding="utf-8") as f:
        grammar = json.load(f)
    for key in ("adjectives", "nouns", "names", "pronouns"):
        assert isinstance(grammar[key], list) and all(isinstance(w, str) for w in grammar[key]), key
    assert len(grammar["adjectives"]) >= 30 and len(grammar["nouns"]) >= 40
    assert set(grammar["pronouns"]) == {"it", "they", "he", "she"}
    for w in SEEDS.split():
        assert any(w in grammar[k] for k in grammar), w

    # One token per word, each the word itself.
    r = subprocess.run([ATTNVIZ, "tokenize", "--model", MODEL, "--text", SEEDS + ".", "--pieces"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    pieces = [p["text"] for p in json.loads(r.stdout)]
    assert pieces == [" " + w for w in SEEDS.split()] + ["."], pieces

    with open(os.path.join(MODEL, "summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    assert summary["task"] == "story"
    adj, pro, ind = (best(summary, k) for k in ("adjective_noun", "pronoun_antecedent", "induction"))
    assert adj >= 0.5, f"best adjective_noun score {adj}"
    assert pro >= 0.5, f"best pronoun_antecedent score {pro}"
    # The induction score averages over every repeated word ("the", "." too): compared with chance, the
    # score of a head attending evenly to every position it may see (summary.json's figures).
    chance = summary["figures"]["induction_chance"]
    assert ind >= 2 * chance, f"best induction score {ind}, chance {chance}"
    fig = summary["figures"]
    assert fig["grammatical_greedy"] >= 0.9 and fig["grammatical_t0.8"] >= 0.9, fig
    assert fig["sentences_greedy"] >= 100 and fig["sentences_t0.8"] >= 100, fig

    # The scene: the seeds' sentence, at an adjective head.
    with open(os.path.join(ROOT, "assets", "scenes", "story.json"), encoding="utf-8") as f:
        scene = json.load(f)
    assert os.path.normpath(os.path.join(ROOT, "assets", "scenes", scene["model"])) == MODEL
    assert scene["model_text"].startswith(SEEDS + ".")
    head = summary["head_scores"][scene["layer"]][scene["head"]]
    assert head["adjective_noun"] >= 0.5, head

    # The README's command makes these bytes again.
    with tempfile.TemporaryDirectory() as tmp:
        made = os.path.join(tmp, "m")
        r = rerun_readme_command(ATTNVIZ, "assets/models/story", made)
        assert_same_bytes(made, MODEL, ("model.safetensors", "config.json", "metrics.csv", "tokenizer.json",
                                        "story_grammar.json"))
        assert "best adjective_noun head" in r.stdout and "grammatical_greedy" in r.stdout, r.stdout
    print("story_model_test: OK (%d bytes; adjective_noun %.3f, pronoun_antecedent %.3f, induction %.3f, "
          "grammatical %.3f / %.3f)" % (size, adj, pro, ind, fig["grammatical_greedy"], fig["grammatical_t0.8"]))


if __name__ == "__main__":
    main()
