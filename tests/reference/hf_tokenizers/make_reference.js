#!/usr/bin/env node
// Makes the Hugging Face reference data for tests/io/tokenizer_hf_test.cpp: small WordPiece (BERT),
// Unigram (T5), SentencePiece-style BPE (Llama 2 / Mistral) and byte-level BPE (GPT-2 / Qwen2 /
// Llama 3 / RoBERTa) tokenizers TRAINED here by Hugging Face's own `tokenizers` library (npm package
// `tokenizers`, native build), then completed the way real checkpoints are (special tokens, <unk>,
// <0xNN> byte pieces, post-processors, decoders) and reloaded from the written file, so the ids are
// what HF gives for that file. Writes tests/data/hf_tokenizers/NAME.tokenizer.json and
// NAME.expected.json (texts, ids without and with special tokens, a sentence pair, decode()).
//
// The two Unigram files with a Precompiled normalizer use SentencePiece's own compiled charsmaps, made
// by make_charsmaps.py (Debian's python3-sentencepiece), which this script runs.
//
// usage (regenerate; node 20):
//   mkdir -p /tmp/hfref && cd /tmp/hfref && npm install tokenizers@0.23.2
//   NODE_PATH=/tmp/hfref/node_modules node tests/reference/hf_tokenizers/make_reference.js
'use strict';
const childProcess = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const hf = require('tokenizers');

const OUT = path.join(__dirname, '..', '..', 'data', 'hf_tokenizers');

const CORPUS = `
The quick brown fox jumps over the lazy dog. The dog didn't care; they're friends, and we'll see.
Attention is all you need: the query, the key and the value. Queries attend to keys; values are mixed.
I've seen the cat sleeping on the mat, and the cat's tail was fluffy. THE CAT'S TAIL! Running, jumping, playing.
def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }  // dot product
if __name__ == "__main__":
    print("hello world", 3.14159, 2.71828, 1e-5)
Numbers: 12345 67890 1,000,000 3.14 42 2024-11-23 0x1F 100% $9.99 +1-555-0100
Whitespace:    four spaces,\t\ttwo tabs,

blank lines,   trailing spaces   
Emoji: 👍🏽 🎉🎉🎉 😀😃😄 ❤️ 🐱🐶 🚀 ✨✨
中文：毛茸茸的蓝色生物在翠绿的森林里漫步。我们今天学习注意力机制，注意力机制是深度学习的核心。
注意力就是你所需要的一切。查询、键和值。今天天气很好，我们去公园散步吧！机器学习和深度学习。
日本語も少し：注意機構。한국어도 조금: 주의 메커니즘. Ünïcödé café naïve résumé façade Crème Brûlée.
Translate English to German: the house is wonderful. Das Haus ist wunderbar. Übersetzung ins Deutsche.
`;
const TRAIN = (CORPUS + 'the the the attention attention learning learned learns 的的 学习学习 ').repeat(3);

const TEXTS = [
  '',
  'hello world',
  'Hello World! HELLO, world?',
  'The quick brown fox jumps over the lazy dog.',
  "I'm sure they'll say we've done it, isn't it? THEY'RE HERE.",
  'unbelievably unattentive transformers re-learning',
  'def f(x):\n    return x ** 2  # square\n',
  'for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }',
  '12345 67890 1,000,000 3.14159 2024-11-23 0x1F 100% $9.99',
  'a   b',
  '   leading and trailing   ',
  'a \t b\n\n\n  c\t\td    ',
  '\n\n',
  '   ',
  'Emoji: 👍🏽 🎉🎉 😀 👨‍👩‍👧 ❤️ 🐱',
  '注意力机制是深度学习的核心。',
  '我们今天学习注意力！今天天气很好',
  '日本語のテキスト、カタカナ。한국어 텍스트',
  'Ünïcödé café naïve résumé façade Crème Brûlée',
  'e\u0301 decomposed cafe\u0301 vs café',
  'ﬁnance ＡＢＣ①②③ Ⅻ',
  'Ελληνικά κείμενα, русский текст, עברית, العربية, हिन्दी',
  'mixed: hello世界, café中文, 😀smile',
  'x\u180Ey',
  'hello \u180E world',
  '\u180E\u180E  \u180Eabc',
  'word\u180E',
  'a \u180E\u180E b',
  '\u180E\n\u180E',
  'x  \u180E',
  'A\u0301 \u00C1B AB ｶﾀｶﾅ\u3000ideographic space',
  'a\u00A0b\u2003c\u3000d',
  'control\u0001chars\u0007here\uFFFDend',
  'zero\u200Bwidth\u200Djoin',
  'supercalifragilisticexpialidocious' + 'x'.repeat(110),
  'Translate English to German: the house is wonderful.',
  '<unk> [UNK] </s> <s>',
  'hello <s> world</s>  again<s>',
  'a [MASK] b [mask] c[MASK]',
  'tab\tseparated\tvalues',
  '   ▁already▁has▁metaspace',
];

const PAIR = ['The cat sat on the mat.', 'Where did the cat sit?'];

function special(token, id) { return {id, content: token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true}; }

function train(model, setup) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hfref-'));
  const corpus = path.join(dir, 'corpus.txt');
  fs.writeFileSync(corpus, TRAIN);
  const tok = new hf.Tokenizer(model);
  setup(tok);
  tok.train([corpus]);
  const file = path.join(dir, 'tokenizer.json');
  tok.save(file, false);
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, {recursive: true});
  return j;
}

function byteTokens() { const r = []; for (let b = 0; b < 256; ++b) r.push('<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'); return r; }

// Prepends `specials` (and optionally the 256 byte tokens) to a BPE/WordPiece vocab object, renumbering.
function prependVocab(vocab, specials) {
  const out = {};
  let id = 0;
  for (const s of specials) out[s] = id++;
  const rest = Object.entries(vocab).sort((a, b) => a[1] - b[1]);
  for (const [t] of rest) if (!(t in out)) out[t] = id++;
  return out;
}

function template(single, pair, tokens, vocab) {
  return {type: 'TemplateProcessing', single, pair,
          special_tokens: Object.fromEntries(tokens.map(t => [t, {id: t, ids: [vocab(t)], tokens: [t]}]))};
}

async function write(name, j, what) {
  const file = path.join(OUT, name + '.tokenizer.json');
  fs.writeFileSync(file, JSON.stringify(j));
  const tok = hf.Tokenizer.fromFile(file);
  const exp = {what, texts: TEXTS, ids: [], ids_special: [], decoded: []};
  for (const t of TEXTS) {
    const plain = await tok.encode(t, null, {addSpecialTokens: false});
    const withSpecial = await tok.encode(t);
    exp.ids.push(plain.getIds());
    exp.ids_special.push(withSpecial.getIds());
    exp.decoded.push(await tok.decode(plain.getIds(), false));
  }
  const pair = await tok.encode(PAIR[0], PAIR[1]);
  exp.pair = {a: PAIR[0], b: PAIR[1], ids: pair.getIds(), type_ids: pair.getTypeIds()};
  fs.writeFileSync(path.join(OUT, name + '.expected.json'), JSON.stringify(exp, null, 0) + '\n');
  console.log(name, Object.keys(j.model.vocab).length, 'tokens');
}

async function main() {
  fs.mkdirSync(OUT, {recursive: true});

  // --- WordPiece (BERT uncased and cased) ---------------------------------------------------
  for (const [name, lower] of [['bert_uncased', true], ['bert_cased', false]]) {
    const j = train(hf.WordPiece.empty(), tok => {
      tok.setNormalizer(hf.bertNormalizer({lowercase: lower, stripAccents: lower}));
      tok.setPreTokenizer(hf.bertPreTokenizer());
    });
    j.model.vocab = prependVocab(j.model.vocab, ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
    j.model.max_input_chars_per_word = 100;
    // HF's BERT files: strip_accents null (follows lowercase).
    j.normalizer = {type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: lower};
    j.added_tokens = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'].map((t, i) => special(t, i));
    const v = t => j.model.vocab[t];
    j.post_processor = lower
        ? template(['[CLS]', '$A', '[SEP]'].map(x => x.startsWith('$') ? {Sequence: {id: 'A', type_id: 0}} : {SpecialToken: {id: x, type_id: 0}}),
                   [{SpecialToken: {id: '[CLS]', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '[SEP]', type_id: 0}},
                    {Sequence: {id: 'B', type_id: 1}}, {SpecialToken: {id: '[SEP]', type_id: 1}}],
                   ['[CLS]', '[SEP]'], v)
        : {type: 'BertProcessing', sep: ['[SEP]', v('[SEP]')], cls: ['[CLS]', v('[CLS]')]};
    j.decoder = {type: 'WordPiece', prefix: '##', cleanup: true};
    await write(name, j, 'WordPiece, BertNormalizer(lowercase ' + lower + '), BertPreTokenizer, ' + j.post_processor.type);
    if (lower) {  // [MASK] matched after the normalizer (so as "[mask]"), with lstrip as RoBERTa's <mask>
      const k = JSON.parse(JSON.stringify(j));
      k.added_tokens[4] = Object.assign(k.added_tokens[4], {normalized: true, lstrip: true});
      await write('bert_normalized_mask', k, 'bert_uncased with [MASK] normalized and lstrip');
    }
  }

  // --- WordPiece and character BPE through the other text steps -----------------------------------
  {
    const j = train(hf.WordPiece.empty(), tok => {
      tok.setNormalizer(hf.sequenceNormalizer([hf.nfdNormalizer(), hf.lowercase(), hf.stripAccentsNormalizer()]));
      tok.setPreTokenizer(hf.whitespacePreTokenizer());
    });
    j.model.vocab = prependVocab(j.model.vocab, ['[UNK]']);
    j.normalizer = {type: 'Sequence', normalizers: [{type: 'NFD'}, {type: 'Lowercase'}, {type: 'StripAccents'}, {type: 'Strip', strip_left: true, strip_right: true}]};
    j.pre_tokenizer = {type: 'Sequence', pretokenizers: [{type: 'Whitespace'}, {type: 'Digits', individual_digits: true}]};
    j.post_processor = null;
    j.decoder = {type: 'WordPiece', prefix: '##', cleanup: false};
    await write('wordpiece_steps', j, 'WordPiece, NFD+Lowercase+StripAccents+Strip, Whitespace+Digits(individual)');
  }
  {
    const j = train(hf.BPE.empty(), tok => {
      tok.setNormalizer(hf.sequenceNormalizer([hf.nfkcNormalizer(), hf.lowercase()]));
      tok.setPreTokenizer(hf.whitespaceSplitPreTokenizer());
    });
    j.model.vocab = prependVocab(j.model.vocab, ['<unk>']);
    Object.assign(j.model, {unk_token: '<unk>', fuse_unk: false, byte_fallback: false});
    j.normalizer = {type: 'Sequence', normalizers: [{type: 'NFKC'}, {type: 'Lowercase'}, {type: 'Replace', pattern: {String: 'the'}, content: 'THE'}]};
    j.pre_tokenizer = {type: 'Sequence', pretokenizers: [
      {type: 'WhitespaceSplit'}, {type: 'Punctuation', behavior: 'MergedWithNext'}, {type: 'Digits', individual_digits: false},
      {type: 'Split', pattern: {String: 'e'}, behavior: 'MergedWithPrevious', invert: false},
      {type: 'Split', pattern: {Regex: '\\s*[aeiou]{2}'}, behavior: 'Contiguous', invert: true},
      {type: 'CharDelimiterSplit', delimiter: '_'}]};
    j.post_processor = null;
    j.decoder = null;
    await write('bpe_steps', j, 'character BPE with unk, NFKC+Lowercase+Replace, six pre-tokenizers, no decoder');
  }

  // --- Unigram (T5-like; and one with byte_fallback) ----------------------------------------
  for (const [name, fallback] of [['t5_unigram', false], ['unigram_byte_fallback', true]]) {
    const j = train(hf.Unigram.empty(), tok => {
      tok.setPreTokenizer(hf.sequencePreTokenizer([hf.whitespaceSplitPreTokenizer(), hf.metaspacePreTokenizer('▁', 'always', true)]));
    });
    const specials = ['<pad>', '</s>', '<unk>'];
    const pieces = specials.map(s => [s, 0.0]);
    if (fallback) for (const b of byteTokens()) pieces.push([b, 0.0]);
    for (const p of j.model.vocab) if (!specials.includes(p[0])) pieces.push(p);
    j.model = {type: 'Unigram', unk_id: 2, vocab: pieces, byte_fallback: fallback};
    j.added_tokens = specials.map((t, i) => special(t, i));
    j.normalizer = fallback ? {type: 'NFKC'}
        : {type: 'Sequence', normalizers: [{type: 'NFKC'}, {type: 'Replace', pattern: {Regex: ' {2,}'}, content: ' '}, {type: 'Strip', strip_left: false, strip_right: true}]};
    j.pre_tokenizer = fallback ? {type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true}
        : {type: 'Sequence', pretokenizers: [{type: 'WhitespaceSplit'}, {type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true}]};
    j.post_processor = template([{Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}],
                                [{Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}, {Sequence: {id: 'B', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}],
                                ['</s>'], () => 1);
    j.decoder = fallback ? {type: 'Sequence', decoders: [{type: 'Replace', pattern: {String: '▁'}, content: ' '}, {type: 'ByteFallback'}, {type: 'Fuse'}, {type: 'Strip', content: ' ', start: 1, stop: 0}]}
        : {type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true};
    await write(name, j, 'Unigram' + (fallback ? ' byte_fallback, NFKC, Metaspace(first)' : ', NFKC+Replace+Strip, WhitespaceSplit+Metaspace(always)'));
  }

  // --- Unigram with SentencePiece's precompiled charsmaps (T5's nmt_nfkc; hand rules) ---------------
  const maps = fs.mkdtempSync(path.join(os.tmpdir(), 'hfref-maps-'));
  childProcess.execFileSync('/usr/bin/python3', [path.join(__dirname, 'make_charsmaps.py'), maps], {stdio: 'inherit'});
  for (const [name, map] of [['t5_precompiled', 'nmt_nfkc'], ['unigram_precompiled_rules', 'rules']]) {
    const j = train(hf.Unigram.empty(), tok => {
      tok.setPreTokenizer(hf.sequencePreTokenizer([hf.whitespaceSplitPreTokenizer(), hf.metaspacePreTokenizer('▁', 'always', true)]));
    });
    const specials = ['<pad>', '</s>', '<unk>'];
    const pieces = specials.map(s => [s, 0.0]);
    for (const p of j.model.vocab) if (!specials.includes(p[0])) pieces.push(p);
    j.model = {type: 'Unigram', unk_id: 2, vocab: pieces, byte_fallback: false};
    j.added_tokens = specials.map((t, i) => special(t, i));
    const charsmap = fs.readFileSync(path.join(maps, map + '.b64'), 'utf8');
    j.normalizer = {type: 'Sequence', normalizers: [{type: 'Precompiled', precompiled_charsmap: charsmap},
                                                    {type: 'Replace', pattern: {Regex: ' {2,}'}, content: ' '}]};
    j.pre_tokenizer = {type: 'Sequence', pretokenizers: [{type: 'WhitespaceSplit'}, {type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true}]};
    j.post_processor = template([{Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}],
                                [{Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}, {Sequence: {id: 'B', type_id: 0}}, {SpecialToken: {id: '</s>', type_id: 0}}],
                                ['</s>'], () => 1);
    j.decoder = {type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true};
    await write(name, j, 'Unigram, Precompiled(' + map + ') + Replace, WhitespaceSplit + Metaspace(always)');
  }
  fs.rmSync(maps, {recursive: true});

  // --- SentencePiece-style BPE (Llama 2: normalizer Prepend+Replace; Mistral: Metaspace) ----------
  for (const [name, metaspace] of [['llama2_bpe', false], ['mistral_bpe', true]]) {
    const j = train(hf.BPE.empty(), tok => {
      tok.setPreTokenizer(hf.metaspacePreTokenizer('▁', 'first', true));
    });
    const specials = ['<unk>', '<s>', '</s>'];
    j.model.vocab = prependVocab(j.model.vocab, specials.concat(byteTokens()));
    Object.assign(j.model, {unk_token: '<unk>', byte_fallback: true, fuse_unk: true});
    j.added_tokens = specials.map((t, i) => special(t, i));
    if (metaspace) {
      j.normalizer = null;
      j.pre_tokenizer = {type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false};
    } else {
      j.normalizer = {type: 'Sequence', normalizers: [{type: 'Prepend', prepend: '▁'}, {type: 'Replace', pattern: {String: ' '}, content: '▁'}]};
      j.pre_tokenizer = null;
    }
    j.post_processor = template([{SpecialToken: {id: '<s>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
                                [{SpecialToken: {id: '<s>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '<s>', type_id: 1}}, {Sequence: {id: 'B', type_id: 1}}],
                                ['<s>'], () => 1);
    j.decoder = metaspace ? {type: 'Sequence', decoders: [{type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false}, {type: 'ByteFallback'}, {type: 'Fuse'}]}
        : {type: 'Sequence', decoders: [{type: 'Replace', pattern: {String: '▁'}, content: ' '}, {type: 'ByteFallback'}, {type: 'Fuse'}, {type: 'Strip', content: ' ', start: 1, stop: 0}]};
    await write(name, j, 'BPE byte_fallback, ' + (metaspace ? 'Metaspace(first, no split)' : 'Prepend+Replace normalizer'));
    if (!metaspace) {  // <s>, </s> matched in the normalized text ("▁hello▁<s>▁world")
      const k = JSON.parse(JSON.stringify(j));
      k.added_tokens = k.added_tokens.map(t => Object.assign(t, {normalized: true}));
      await write('llama2_normalized_specials', k, 'llama2_bpe with its special tokens normalized');
    }
  }

  // --- Byte-level BPE with GPT-2 / Qwen2 / Llama-3 split patterns (U+180E), RoBERTa processing ---
  const patterns = {
    gpt2_bytelevel: null,
    qwen2_bytelevel: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    llama3_bytelevel: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  };
  for (const [name, pattern] of Object.entries(patterns)) {
    const j = train(hf.BPE.empty(), tok => {
      tok.setPreTokenizer(hf.byteLevelPreTokenizer(false, true));
    });
    if (pattern) {
      j.pre_tokenizer = {type: 'Sequence', pretokenizers: [
        {type: 'Split', pattern: {Regex: pattern}, behavior: 'Isolated', invert: false},
        {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false}]};
    } else {
      j.pre_tokenizer = {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true};
    }
    const n = Object.keys(j.model.vocab).length;
    const specials = name === 'gpt2_bytelevel' ? ['<s>', '</s>'] : ['<|begin_of_text|>'];
    j.added_tokens = specials.map((t, i) => special(t, n + i));
    j.post_processor = name === 'gpt2_bytelevel'
        ? {type: 'RobertaProcessing', sep: ['</s>', n + 1], cls: ['<s>', n], trim_offsets: true, add_prefix_space: false}
        : name === 'llama3_bytelevel'
        ? {type: 'Sequence', processors: [{type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true},
            template([{SpecialToken: {id: '<|begin_of_text|>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}],
                     [{SpecialToken: {id: '<|begin_of_text|>', type_id: 0}}, {Sequence: {id: 'A', type_id: 0}}, {SpecialToken: {id: '<|begin_of_text|>', type_id: 1}}, {Sequence: {id: 'B', type_id: 1}}],
                     ['<|begin_of_text|>'], () => n)]}
        : {type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false};
    j.decoder = {type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true};
    await write(name, j, 'byte-level BPE, ' + (pattern ? name.split('_')[0] + ' Split pattern' : 'ByteLevel(use_regex)') + ', ' + j.post_processor.type);
  }
}

main().catch(e => { console.error(e); process.exit(1); });
