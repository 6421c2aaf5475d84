# Every tokenizer of tests/data/hf_tokenizers (WordPiece, Unigram with and without SentencePiece's
# precompiled charsmap, character and byte-level BPE) on the Windows build and the Linux build, for
# tests/windows/wine_test.sh: both must give Hugging Face's ids for every text of NAME.expected.json,
# without and with the special tokens. One line per tokenizer; exit 1 on the first difference.
#   compare_tokenizers.py DATA_DIR WORK_DIR -- WINDOWS_COMMAND... -- LINUX_COMMAND...
import glob
import json
import os
import shutil
import subprocess
import sys

data, work = sys.argv[1], sys.argv[2]
rest = sys.argv[4:]
split = rest.index("--")
win_cmd, lin_cmd = rest[:split], rest[split + 1:]


def tokenize(cmd, model, texts, special):
    args = cmd + ["tokenize", "--model", model, "--texts-json", texts]
    if not special:
        args.append("--no-special-tokens")
    r = subprocess.run(args, capture_output=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
        sys.exit(1)
    return json.loads(r.stdout.decode())


names = sorted(os.path.basename(f)[: -len(".expected.json")] for f in glob.glob(data + "/*.expected.json"))
if not names:
    print(f"FAIL: no tokenizers in {data}")
    sys.exit(1)
for name in names:
    expected = json.load(open(f"{data}/{name}.expected.json", encoding="utf-8"))
    model = os.path.join(work, name)
    os.makedirs(model, exist_ok=True)
    shutil.copyfile(f"{data}/{name}.tokenizer.json", os.path.join(model, "tokenizer.json"))
    texts = os.path.join(work, name + ".texts.json")
    with open(texts, "w", encoding="utf-8") as f:
        json.dump(expected["texts"], f, ensure_ascii=False)
    for special, key in ((False, "ids"), (True, "ids_special")):
        w, l = tokenize(win_cmd, model, texts, special), tokenize(lin_cmd, model, texts, special)
        for i, text in enumerate(expected["texts"]):
            if w[i] != expected[key][i] or l[i] != expected[key][i]:
                print(f"FAIL: {name}: text {i} {text!r} ({key}): Windows {w[i]}, Linux {l[i]}, "
                      f"Hugging Face {expected[key][i]}")
                sys.exit(1)
    chars = sum(len(t) for t in expected["texts"])
    print(f"ok: tokenizer {name} ({expected['what']}): {len(expected['texts'])} texts, {chars} characters, "
          f"ids with and without special tokens equal to Hugging Face's on Windows and Linux")
print(f"ok: {len(names)} Hugging Face tokenizers give the same ids on Windows as on Linux")
