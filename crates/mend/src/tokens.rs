//! Exact token counts for OpenAI's public vocabularies (`o200k_base`, `cl100k_base`),
//! equal to tiktoken's, at a few times the speed of counting through `bpe-openai` alone.
//!
//! Counting is tiktoken's two steps: the text is cut into pieces by the vocabulary's
//! pre-tokenization pattern, and each piece is byte-pair encoded on its own. Here:
//! - the pattern is matched by hand ([`split`]), one pass over the bytes, instead of one
//!   anchored regex search per piece (which cost more than the encoding itself). The
//!   character classes come from `regex-syntax`'s Unicode tables, the ones the regex
//!   engines of tiktoken and `bpe-openai` use, and a test compares every piece with
//!   `bpe-openai`'s regex splitter on recorded traffic and random Unicode text. For
//!   o200k, the text's ASCII classes are first taken 16 bytes at a time (SSE2 compares and
//!   `movemask`, into a bit per byte and class, [`Block`]), and a piece of ASCII ends
//!   where one `trailing_zeros` of those masks says its run ends, with no branch per
//!   byte; the byte-table matcher it is tested against takes a run longer than the
//!   64-byte window;
//! - a piece that is itself a token counts 1 (tiktoken's own shortcut) through a table of
//!   the vocabulary, and only the others are merged, by tiktoken's own merge over the
//!   tokens' ranks (by `bpe-openai`'s exact BPE past 64 bytes), remembered for the
//!   caller's run in a small memo ([`Merged`]).
//!
//! Its hot paths are written for few mispredicted branches, which cost a cold count more
//! than its instructions do. Everything is built once per process, on first use; the
//! vocabularies are `bpe-openai`'s. Against `bpe-openai`'s own counting and `tiktoken-rs`
//! (docs/PERFORMANCE.md, trim): the same counts, 4-5x and 8x faster.

use std::sync::LazyLock;

use regex_syntax::hir::{Class, HirKind};
use rustc_hash::FxHashMap;

/// The two vocabularies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vocab {
    O200k,
    Cl100k,
}

struct Loaded {
    tokenizer: &'static bpe_openai::Tokenizer,
    /// The tokens of up to 8 bytes (most pieces are one of them), with their ranks.
    short: ShortTokens,
    /// The other tokens with their ranks: a piece found in either is one token.
    long: FxHashMap<&'static [u8], u32>,
    /// The rank of every two-byte string that is a token (`u32::MAX` for the others),
    /// indexed by its little-endian `u16`: most of the merge's lookups, answered from
    /// 256 KB instead of the large table.
    pairs: Vec<u32>,
}

fn load(tokenizer: &'static bpe_openai::Tokenizer) -> Loaded {
    let bpe = &tokenizer.bpe;
    // A token's id is its rank: `bpe-openai` numbers the tokens of tiktoken's file in
    // order, and the file lists them by rank (tiktoken merges the lowest rank first).
    let tokens = (0..bpe.num_tokens() as u32).map(|id| (bpe.token_bytes(id), id));
    let (short, long): (Vec<_>, Vec<_>) = tokens.partition(|(t, _)| short_key(t).is_some());
    let mut pairs = vec![u32::MAX; 1 << 16];
    for &(t, rank) in &short {
        if let [a, b] = *t {
            pairs[u16::from_le_bytes([a, b]) as usize] = rank;
        }
    }
    Loaded {
        tokenizer,
        short: ShortTokens::new(&short),
        long: long.into_iter().collect(),
        pairs,
    }
}

/// The key of a byte string in [`ShortTokens`]: its bytes as a little-endian `u64`, with
/// the length in the top byte when it is shorter than 8 (that byte is otherwise zero, so
/// "a" and "a\0" differ). An 8-byte string whose last byte is 0 to 7 has no key (it would
/// read as a shorter one), nor has a longer one: those are in the long table. A key is
/// never 0, the empty slot.
#[inline(always)]
fn short_key(b: &[u8]) -> Option<u64> {
    match b.len() {
        1..=7 => Some(word(b) | ((b.len() as u64) << 56)),
        8 if b[7] > 7 => Some(word(b)),
        _ => None,
    }
}

/// The key of `b[start..end]` (1 to 8 bytes), read at once when 8 bytes are there; `None`
/// as [`short_key`].
#[inline(always)]
fn short_key_at(b: &[u8], start: usize, end: usize) -> Option<u64> {
    let len = end - start;
    match b.get(start..start + 8) {
        Some(eight) => {
            let w = u64::from_le_bytes(eight.try_into().unwrap_or([0; 8]));
            if len < 8 {
                Some((w & ((1u64 << (len * 8)) - 1)) | ((len as u64) << 56))
            } else if w >> 56 > 7 {
                Some(w)
            } else {
                None
            }
        }
        None => short_key(&b[start..end]),
    }
}

/// An open-addressing map of [`short_key`]s to ranks.
struct ShortTokens {
    /// 0: empty slot.
    keys: Vec<u64>,
    ranks: Vec<u32>,
    shift: u32,
}

impl ShortTokens {
    fn new(tokens: &[(&[u8], u32)]) -> ShortTokens {
        // At most half full: probes stay short and the table small.
        let bits = (tokens.len().max(1) * 2)
            .next_power_of_two()
            .trailing_zeros();
        let mut set = ShortTokens {
            keys: vec![0; 1 << bits],
            ranks: vec![0; 1 << bits],
            shift: 64 - bits,
        };
        for &(t, rank) in tokens {
            let Some(k) = short_key(t) else { continue };
            let mut i = set.slot(k);
            while set.keys[i] != 0 && set.keys[i] != k {
                i = (i + 1) & (set.keys.len() - 1);
            }
            set.keys[i] = k;
            set.ranks[i] = rank;
        }
        set
    }

    #[inline(always)]
    fn slot(&self, k: u64) -> usize {
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Whether `k` is in the table. Two slots a step, their outcome taken at once: a
    /// found key is mostly in its first two slots, so the loop rarely goes round.
    #[inline(always)]
    fn contains(&self, k: u64) -> bool {
        let mask = self.keys.len() - 1;
        let mut i = self.slot(k);
        loop {
            let (a, c) = (self.keys[i], self.keys[(i + 1) & mask]);
            if (a == k) | (c == k) {
                return true;
            }
            if (a == 0) | (c == 0) {
                return false;
            }
            i = (i + 2) & mask;
        }
    }

    /// The slot holding `k`.
    #[inline(always)]
    fn find(&self, k: u64) -> Option<usize> {
        let mask = self.keys.len() - 1;
        let mut i = self.slot(k);
        loop {
            match self.keys[i] {
                0 => return None,
                x if x == k => return Some(i),
                _ => i = (i + 1) & mask,
            }
        }
    }
}

/// The end of the run of bytes in `lo..=hi` (ASCII) from `i`, found eight bytes at a
/// time: a word's letters are one step with no branch per letter (whose exit the CPU
/// would mispredict at most words' end).
#[inline(always)]
fn ascii_run(b: &[u8], mut i: usize, lo: u8, hi: u8) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    loop {
        let w = match b.get(i..i + 8) {
            Some(eight) => u64::from_le_bytes(eight.try_into().unwrap_or([0; 8])),
            // The text's end: zero bytes are in no run.
            None => word(&b[i.min(b.len())..]),
        };
        // Per byte (7 low bits x, no carry out of a byte): x + (0x80 - lo) sets the high bit
        // when x >= lo, x + (0x7F - hi) when x > hi; a byte past ASCII is in no run.
        let x = w & !HIGH;
        let inside = (x + ONES * (0x80 - lo as u64)) & !(x + ONES * (0x7F - hi as u64)) & !w;
        let outside = !inside & HIGH;
        if outside != 0 {
            return (i + (outside.trailing_zeros() / 8) as usize).min(b.len());
        }
        i += 8;
    }
}

/// Up to 8 bytes as a little-endian word.
fn word(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(w)
}

impl Loaded {
    /// Whether `b[start..end]` (not empty) is a token. A piece of up to 8 bytes (nearly
    /// all of them) is one probe of the short table whatever its length: a branch on the
    /// length would be mispredicted piece after piece.
    #[inline(always)]
    fn is_token(&self, b: &[u8], start: usize, end: usize) -> bool {
        let len = end - start;
        if len <= 8 {
            if let Some(eight) = b.get(start..start + 8) {
                let w = u64::from_le_bytes(eight.try_into().unwrap_or([0; 8]));
                // As `short_key`: the bytes, the length in the top byte below 8 bytes.
                let k = (w & (u64::MAX >> (64 - 8 * len))) | (((len & 7) as u64) << 56);
                if len < 8 || k >> 56 > 7 {
                    return self.short.contains(k);
                }
            }
        }
        match (len <= 8).then(|| short_key_at(b, start, end)).flatten() {
            Some(k) => self.short.contains(k),
            None => self.long.contains_key(&b[start..end]),
        }
    }

    /// The rank of `b[start..end]` (2 bytes or more), `u32::MAX` when it is no token.
    #[inline(always)]
    fn rank_in(&self, b: &[u8], start: usize, end: usize) -> u32 {
        let len = end - start;
        if len == 2 {
            return self.pairs[u16::from_le_bytes([b[start], b[start + 1]]) as usize];
        }
        match (len <= 8).then(|| short_key_at(b, start, end)).flatten() {
            Some(k) => self.short.find(k).map_or(u32::MAX, |i| self.short.ranks[i]),
            None => self.long.get(&b[start..end]).copied().unwrap_or(u32::MAX),
        }
    }

    /// The tokens of a piece that is not one token, by tiktoken's own merge
    /// (`_byte_pair_merge`): the adjacent pair of lowest rank merged first, the leftmost
    /// of equal ones, until no pair is a token. A long piece goes to `bpe-openai`'s
    /// encoder (the same count), as the merge is quadratic.
    #[inline(never)]
    fn merge_count(&self, b: &[u8], start: usize, end: usize) -> usize {
        match end - start {
            // Two parts never merge: they would be the piece, which is no token. So two
            // bytes stay two, and three bytes are two parts once one of their pairs is a
            // token, else three.
            n @ 0..=2 => n,
            3 => {
                let pair = |i: usize| self.pairs[u16::from_le_bytes([b[i], b[i + 1]]) as usize];
                if pair(start) != u32::MAX || pair(start + 1) != u32::MAX {
                    2
                } else {
                    3
                }
            }
            // Most of the others are short: a smaller frame to set up.
            4..=16 => self.merge::<17>(b, start, end),
            17..=64 => self.merge::<65>(b, start, end),
            _ => self.tokenizer.bpe.count(&b[start..end]),
        }
    }

    /// [`Self::merge_count`] of a piece of 2 to `N - 1` bytes.
    #[inline(always)]
    fn merge<const N: usize>(&self, b: &[u8], start: usize, end: usize) -> usize {
        let n = end - start;
        // Part k starts at starts[k]; ranks[k] is the rank of parts k and k+1 merged.
        let mut starts = [0u8; N];
        let mut ranks = [u32::MAX; N];
        for i in 0..n - 1 {
            starts[i] = i as u8;
            ranks[i] = self.pairs[u16::from_le_bytes([b[start + i], b[start + i + 1]]) as usize];
        }
        starts[n - 1] = (n - 1) as u8;
        starts[n] = n as u8;
        // Parts 0..len, the last one the end (n).
        let mut len = n + 1;
        // The rank of parts i, i+1 and i+2 as one, if there are three.
        let span = |starts: &[u8; N], len: usize, i: usize| -> u32 {
            if i + 3 < len {
                self.rank_in(
                    b,
                    start + starts[i] as usize,
                    start + starts[i + 3] as usize,
                )
            } else {
                u32::MAX
            }
        };
        loop {
            let (mut min, mut i) = (u32::MAX, 0);
            for (k, &r) in ranks[..len - 1].iter().enumerate() {
                if r < min {
                    (min, i) = (r, k);
                }
            }
            if min == u32::MAX {
                break;
            }
            if i > 0 {
                ranks[i - 1] = span(&starts, len, i - 1);
            }
            ranks[i] = span(&starts, len, i);
            // Part i+1 joins part i (a loop: `copy_within` calls `memmove`).
            for k in i + 1..len - 1 {
                starts[k] = starts[k + 1];
                ranks[k] = ranks[k + 1];
            }
            len -= 1;
        }
        len - 1
    }
}

static O200K: LazyLock<Loaded> = LazyLock::new(|| load(bpe_openai::o200k_base()));
static CL100K: LazyLock<Loaded> = LazyLock::new(|| load(bpe_openai::cl100k_base()));

impl Vocab {
    fn loaded(self) -> &'static Loaded {
        match self {
            Vocab::O200k => &O200K,
            Vocab::Cl100k => &CL100K,
        }
    }

    /// Tokens in a text, as tiktoken's `encode_ordinary` counts them.
    #[cfg(test)]
    pub(crate) fn count(self, text: &str) -> usize {
        self.count_in(text, &mut Merged::default())
    }

    /// Tokens in a text, as tiktoken's `encode_ordinary` counts them, remembering in
    /// `merged` the pieces that are not one token.
    pub(crate) fn count_in(self, text: &str, merged: &mut Merged) -> usize {
        let l = self.loaded();
        merged.serve(self);
        let b = text.as_bytes();
        let mut n = 0;
        if self == Vocab::O200k {
            let mut blocks = std::mem::take(&mut merged.blocks);
            classify(b, &mut blocks);
            o200k_pieces(text, &blocks, |start, end| {
                n += if l.is_token(b, start, end) {
                    1
                } else {
                    merged.count(l, b, start, end)
                };
            });
            merged.blocks = blocks;
            return n;
        }
        let mut pieces = Pieces::new(self, text);
        while let Some((start, end)) = pieces.next_range() {
            n += if l.is_token(b, start, end) {
                1
            } else {
                merged.count(l, b, start, end)
            };
        }
        n
    }
}

/// Calls `piece` with the range of each o200k piece of `text`, in order: the ASCII ones
/// read off `blocks` (its [`classify`]), the others cut by the Unicode matcher.
#[inline(always)]
fn o200k_pieces(text: &str, blocks: &[Block], mut piece: impl FnMut(usize, usize)) {
    let mut pieces = Pieces::new(Vocab::O200k, text);
    let n = text.len();
    let mut p = 0;
    while p < n {
        let e = match pieces.o200k_masked(blocks, p) {
            Some(e) => e,
            None => {
                pieces.pos = p;
                pieces.next_range().map_or(n, |r| r.1)
            }
        };
        piece(p, e);
        p = e;
    }
}

/// The counts of pieces that are not one token, kept across the texts of one caller's
/// run (a trim keeps one for its call, never longer): a word that BPE splits (a name, an
/// id, a word of another language) tends to come back in the same history, and its merge
/// costs ten probes of the large tables, each a likely cache miss, where this is one
/// probe of a few KB. Direct-mapped over the pieces of 4 to 8 bytes (shorter ones merge
/// at once); allocated at the first such piece. It also lends the splitter the buffer of
/// the class [`Block`]s of the text being counted, so that texts after the first reuse it.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    /// The vocabulary the counts are of.
    vocab: Option<Vocab>,
    /// (short key, count); key 0 is an empty slot.
    slots: Vec<(u64, u32)>,
    /// The class blocks of the text being counted (o200k).
    blocks: Vec<Block>,
}

impl Merged {
    const BITS: u32 = 9;

    /// Counts of `vocab` from now on (forgetting others).
    fn serve(&mut self, vocab: Vocab) {
        if self.vocab != Some(vocab) {
            self.vocab = Some(vocab);
            self.slots.clear();
        }
    }

    /// [`Loaded::merge_count`] of `b[start..end]`, remembered.
    #[inline(never)]
    fn count(&mut self, l: &Loaded, b: &[u8], start: usize, end: usize) -> usize {
        let k = match end - start {
            4..=8 => short_key_at(b, start, end),
            _ => None,
        };
        let Some(k) = k else {
            return l.merge_count(b, start, end);
        };
        if self.slots.is_empty() {
            self.slots = vec![(0, 0); 1 << Self::BITS];
        }
        let i = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - Self::BITS)) as usize;
        match self.slots[i] {
            (key, n) if key == k => n as usize,
            _ => {
                let n = l.merge_count(b, start, end);
                self.slots[i] = (k, n as u32);
                n
            }
        }
    }
}

/// The pieces of a text under a vocabulary's pre-tokenization pattern.
#[cfg(test)]
pub(crate) fn split(vocab: Vocab, text: &str) -> Vec<&str> {
    if vocab == Vocab::O200k {
        let mut blocks = Vec::new();
        classify(text.as_bytes(), &mut blocks);
        let mut out = Vec::new();
        o200k_pieces(text, &blocks, |s, e| out.push(&text[s..e]));
        return out;
    }
    split_scalar(vocab, text)
}

/// [`split`] without the class blocks: the byte-table matcher alone (the reference the
/// block reader is held against).
#[cfg(test)]
fn split_scalar(vocab: Vocab, text: &str) -> Vec<&str> {
    let mut pieces = Pieces::new(vocab, text);
    std::iter::from_fn(|| pieces.next_range().map(|(s, e)| &text[s..e])).collect()
}

// Character class bits.
const UPPER: u8 = 1; // Lu, Lt
const LOWER: u8 = 2; // Ll
const OTHER_LETTER: u8 = 4; // Lm, Lo
const MARK: u8 = 8; // M
const NUMBER: u8 = 16; // N
const SPACE: u8 = 32; // \s (White_Space)
const NEWLINE: u8 = 64; // \r, \n
/// A byte of a character past ASCII (only in [`Classes::byte`]).
const NON_ASCII: u8 = 128;

const LETTER: u8 = UPPER | LOWER | OTHER_LETTER;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
const CASED_UPPER: u8 = UPPER | OTHER_LETTER | MARK;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
const CASED_LOWER: u8 = LOWER | OTHER_LETTER | MARK;

/// `[^\r\n\p{L}\p{N}]`
fn is_prefix(c: u8) -> bool {
    c & (NEWLINE | LETTER | NUMBER) == 0
}
/// `[^\s\p{L}\p{N}]`
fn is_punct(c: u8) -> bool {
    c & (SPACE | LETTER | NUMBER) == 0
}

struct Classes {
    ascii: [u8; 128],
    /// The bits of each ASCII byte, [`NON_ASCII`] for the others.
    byte: [u8; 256],
    bmp: Vec<u8>,
    /// Sorted, disjoint ranges above U+FFFF with their bits.
    astral: Vec<(u32, u32, u8)>,
    /// The characters that match each contraction letter case-insensitively.
    folds: [Vec<char>; 8],
}

const CONTRACTION_LETTERS: [char; 8] = ['s', 't', 'r', 'e', 'v', 'm', 'l', 'd'];

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::Parser::new()
        .parse(pattern)
        .expect("a valid Unicode class");
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        HirKind::Literal(l) => std::str::from_utf8(&l.0)
            .ok()
            .and_then(|s| s.chars().next())
            .map(|c| vec![(c as u32, c as u32)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

static CLASSES: LazyLock<Classes> = LazyLock::new(|| {
    let mut bmp = vec![0u8; 0x10000];
    let mut astral = Vec::new();
    let sets: [(&str, u8); 9] = [
        (r"\p{Lu}", UPPER),
        (r"\p{Lt}", UPPER),
        (r"\p{Ll}", LOWER),
        (r"\p{Lm}", OTHER_LETTER),
        (r"\p{Lo}", OTHER_LETTER),
        (r"\p{M}", MARK),
        (r"\p{N}", NUMBER),
        (r"\s", SPACE),
        (r"[\r\n]", NEWLINE),
    ];
    for (pattern, bit) in sets {
        for (lo, hi) in class_ranges(pattern) {
            for cp in lo..=hi.min(0xFFFF) {
                bmp[cp as usize] |= bit;
            }
            if hi > 0xFFFF {
                astral.push((lo.max(0x10000), hi, bit));
            }
        }
    }
    astral.sort_unstable();
    let folds = CONTRACTION_LETTERS.map(|c| {
        class_ranges(&format!("(?i:{c})"))
            .into_iter()
            .flat_map(|(lo, hi)| (lo..=hi).filter_map(char::from_u32))
            .collect()
    });
    let mut ascii = [0u8; 128];
    ascii.copy_from_slice(&bmp[..128]);
    let mut byte = [NON_ASCII; 256];
    byte[..128].copy_from_slice(&ascii);
    Classes {
        ascii,
        byte,
        bmp,
        astral,
        folds,
    }
});

impl Classes {
    /// The class bits and byte length of the character at `i` (a char boundary).
    #[inline(always)]
    fn at(&self, b: &[u8], i: usize) -> (u8, usize) {
        let b0 = b[i];
        if b0 < 0x80 {
            return (self.ascii[b0 as usize], 1);
        }
        self.at_wide(b, i)
    }

    #[inline(never)]
    fn at_wide(&self, b: &[u8], i: usize) -> (u8, usize) {
        let (cp, len) = decode(b, i);
        (self.of(cp), len)
    }

    fn of(&self, cp: u32) -> u8 {
        if cp < 0x10000 {
            return self.bmp[cp as usize];
        }
        let k = self.astral.partition_point(|r| r.1 < cp);
        self.astral.get(k).filter(|r| r.0 <= cp).map_or(0, |r| r.2)
    }
}

/// The code point and byte length at `i`, a char boundary of valid UTF-8.
#[inline]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    let cont = |k: usize| (b.get(i + k).copied().unwrap_or(0x80) as u32) & 0x3F;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (
            ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3),
            4,
        )
    }
}

/// The ASCII classes of 64 bytes of a text, a bit per byte (bit i is byte i of the block):
/// what the o200k splitter reads a piece's runs from, one `trailing_zeros` a run instead of
/// a branch per byte. Bytes past the text's end are in no class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Block {
    /// `a-z`
    lower: u64,
    /// `A-Z`
    upper: u64,
    /// `0-9`
    digit: u64,
    /// ASCII `\s`: `\t \n \x0b \x0c \r` and space
    space: u64,
    /// `\r \n`
    newline: u64,
    /// `\r \n /`: what may follow a punctuation run in its piece
    tail: u64,
    /// ASCII `[^\s\p{L}\p{N}]`
    punct: u64,
    /// A byte of a character past ASCII.
    wide: u64,
}

/// 16 bytes' class masks, in [`Block`]'s order (the bytes past the text's end padded with
/// zeros: the caller masks them out).
type Masks16 = [u16; 8];

/// [`Masks16`] with SSE2 (the x86_64 baseline; `safe_arch` lends the intrinsics as safe
/// functions): a compare and a `movemask` a class.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn classify_16(chunk: [u8; 16]) -> Masks16 {
    use safe_arch::{
        add_i8_m128i, cmp_eq_mask_i8_m128i, cmp_lt_mask_i8_m128i, m128i, move_mask_i8_m128i,
        set_splat_i8_m128i,
    };
    let v = m128i::from(chunk);
    // `lo..=hi` with signed compares: the byte minus `lo`, moved to start at -128, is below
    // the range's length minus 128 (bytes past ASCII wrap round to above it).
    let range = |lo: u8, hi: u8| {
        let moved = add_i8_m128i(v, set_splat_i8_m128i(0x80u8.wrapping_sub(lo) as i8));
        cmp_lt_mask_i8_m128i(moved, set_splat_i8_m128i((hi - lo) as i8 - 127))
    };
    let is = |c: u8| cmp_eq_mask_i8_m128i(v, set_splat_i8_m128i(c as i8));
    let mask = |m: m128i| move_mask_i8_m128i(m) as u16;
    let newline = is(b'\n') | is(b'\r');
    let (lower, upper, digit) = (
        mask(range(b'a', b'z')),
        mask(range(b'A', b'Z')),
        mask(range(b'0', b'9')),
    );
    let space = mask(range(b'\t', b'\r') | is(b' '));
    let wide = mask(v);
    [
        lower,
        upper,
        digit,
        space,
        mask(newline),
        mask(newline | is(b'/')),
        !(lower | upper | digit | space | wide),
        wide,
    ]
}

/// [`Masks16`] on other targets, byte by byte.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn classify_16(chunk: [u8; 16]) -> Masks16 {
    classify_16_bytes(chunk)
}

/// [`Masks16`] byte by byte (the portable classifier, and the SIMD one's reference).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn classify_16_bytes(chunk: [u8; 16]) -> Masks16 {
    let mut m = [0u16; 8];
    for (i, &c) in chunk.iter().enumerate() {
        let bits = [
            c.is_ascii_lowercase(),
            c.is_ascii_uppercase(),
            c.is_ascii_digit(),
            matches!(c, b'\t'..=b'\r' | b' '),
            matches!(c, b'\n' | b'\r'),
            matches!(c, b'\n' | b'\r' | b'/'),
            c < 0x80 && !c.is_ascii_alphanumeric() && !matches!(c, b'\t'..=b'\r' | b' '),
            c >= 0x80,
        ];
        for (k, bit) in bits.into_iter().enumerate() {
            m[k] |= u16::from(bit) << i;
        }
    }
    m
}

/// The [`Block`]s of `b` into `out`, and one empty block past them (a window read at the
/// last block's bytes reads it).
fn classify(b: &[u8], out: &mut Vec<Block>) {
    out.clear();
    out.reserve(b.len() / 64 + 2);
    let block = |m: [u64; 8]| {
        let [lower, upper, digit, space, newline, tail, punct, wide] = m;
        Block {
            lower,
            upper,
            digit,
            space,
            newline,
            tail,
            punct,
            wide,
        }
    };
    let mut chunks = b.chunks_exact(64);
    for chunk in chunks.by_ref() {
        let mut m = [0u64; 8];
        for (q, sixteen) in chunk.chunks_exact(16).enumerate() {
            let bytes: [u8; 16] = sixteen.try_into().unwrap_or_default();
            for (k, x) in classify_16(bytes).into_iter().enumerate() {
                m[k] |= u64::from(x) << (16 * q);
            }
        }
        out.push(block(m));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut m = [0u64; 8];
        for (q, sixteen) in rest.chunks(16).enumerate() {
            let mut bytes = [0u8; 16];
            bytes[..sixteen.len()].copy_from_slice(sixteen);
            // The padding's zero bytes would read as punctuation: masked out.
            let valid = (u32::MAX >> (32 - sixteen.len())) as u16;
            for (k, x) in classify_16(bytes).into_iter().enumerate() {
                m[k] |= u64::from(x & valid) << (16 * q);
            }
        }
        out.push(block(m));
    }
    out.push(Block::default());
}

/// The 64 bits of a class from byte `p` on (bit 0 is byte `p`), from the two blocks it
/// falls in.
#[inline(always)]
fn window(blocks: &[Block], p: usize, class: impl Fn(&Block) -> u64) -> u64 {
    let (k, s) = (p >> 6, p & 63);
    // `<< 1 << (63 - s)`: no shift by 64 when `s` is 0.
    (class(&blocks[k]) >> s) | ((class(&blocks[k + 1]) << 1) << (63 - s))
}

struct Pieces<'a> {
    vocab: Vocab,
    b: &'a [u8],
    pos: usize,
    cls: &'static Classes,
}

impl<'a> Pieces<'a> {
    fn new(vocab: Vocab, text: &'a str) -> Pieces<'a> {
        Pieces {
            vocab,
            b: text.as_bytes(),
            pos: 0,
            cls: &CLASSES,
        }
    }

    /// The byte range of the next piece.
    #[inline]
    fn next_range(&mut self) -> Option<(usize, usize)> {
        let p = self.pos;
        if p >= self.b.len() {
            return None;
        }
        let end = match self.vocab {
            Vocab::O200k => match self.o200k_ascii(p) {
                Some(e) => e,
                None => self.o200k(p),
            },
            Vocab::Cl100k => self.cl100k(p),
        };
        // Never stall, never cut a character (unreachable: some branch always matches).
        let end = if end > p {
            end
        } else {
            p + self.cls.at(self.b, p).1
        };
        self.pos = end;
        Some((p, end))
    }

    #[inline]
    fn at(&self, i: usize) -> (u8, usize) {
        self.cls.at(self.b, i)
    }

    /// The end of the run of characters with any of `mask`'s bits, from `i`.
    #[inline]
    fn run(&self, mut i: usize, mask: u8) -> usize {
        while i < self.b.len() {
            let (c, l) = self.at(i);
            if c & mask == 0 {
                break;
            }
            i += l;
        }
        i
    }

    fn prev(&self, mut i: usize) -> usize {
        i -= 1;
        while i > 0 && self.b[i] & 0xC0 == 0x80 {
            i -= 1;
        }
        i
    }

    /// Whether the character at `i` folds to contraction letter `k`; its length if so.
    fn folds_to(&self, i: usize, k: usize) -> Option<usize> {
        if i >= self.b.len() {
            return None;
        }
        let (cp, len) = decode(self.b, i);
        let c = char::from_u32(cp)?;
        self.cls.folds[k].contains(&c).then_some(len)
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `i`: its end.
    fn contraction(&self, i: usize) -> Option<usize> {
        if self.b.get(i) != Some(&b'\'') {
            return None;
        }
        let i = i + 1;
        // 's 't (letters 0, 1), 're 've (2+3, 4+3), 'm (5), 'll (6+6), 'd (7)
        for single in [0, 1] {
            if let Some(l) = self.folds_to(i, single) {
                return Some(i + l);
            }
        }
        for (a, b) in [(2, 3), (4, 3)] {
            if let Some(l) = self.folds_to(i, a) {
                if let Some(l2) = self.folds_to(i + l, b) {
                    return Some(i + l + l2);
                }
            }
        }
        if let Some(l) = self.folds_to(i, 5) {
            return Some(i + l);
        }
        if let Some(l) = self.folds_to(i, 6) {
            if let Some(l2) = self.folds_to(i + l, 6) {
                return Some(i + l + l2);
            }
        }
        self.folds_to(i, 7).map(|l| i + l)
    }

    fn with_contraction(&self, s: usize) -> usize {
        self.contraction(s).unwrap_or(s)
    }

    /// `[upper]*[lower]+(contraction)?` at `q`, as a backtracking matcher takes it.
    #[inline]
    fn upper_star_lower_plus(&self, q: usize) -> Option<usize> {
        let r = self.run(q, CASED_UPPER);
        if r < self.b.len() && self.at(r).0 & CASED_LOWER != 0 {
            return Some(self.with_contraction(self.run(r, CASED_LOWER)));
        }
        // Give back upper characters until one of them can start the lower run; the
        // characters after it are not lower (else a longer split would have matched).
        let mut j = r;
        while j > q {
            j = self.prev(j);
            let (c, l) = self.at(j);
            if c & CASED_LOWER != 0 {
                return Some(self.with_contraction(j + l));
            }
        }
        None
    }

    /// `[upper]+[lower]*(contraction)?` at `q`.
    fn upper_plus_lower_star(&self, q: usize) -> Option<usize> {
        let r = self.run(q, CASED_UPPER);
        (r > q).then(|| self.with_contraction(self.run(r, CASED_LOWER)))
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `p`, a space.
    fn spaces(&self, p: usize) -> usize {
        let r = self.run(p, SPACE);
        // \s*[\r\n]+: up to the last newline of the run.
        let mut j = r;
        while j > p {
            j = self.prev(j);
            if self.at(j).0 & NEWLINE != 0 {
                return j + 1;
            }
        }
        if r == self.b.len() {
            return r;
        }
        // \s+(?!\S): all but the last space before a non-space; else \s+.
        let last = self.prev(r);
        if last > p {
            last
        } else {
            r
        }
    }

    /// ` ?[^\s\p{L}\p{N}]+` then `[\r\n]*` (plus `/` for o200k) at `p`.
    fn punct(&self, p: usize, c0: u8, slash: bool) -> Option<usize> {
        let q = if self.b[p] == b' ' && p + 1 < self.b.len() && is_punct(self.at(p + 1).0) {
            p + 1
        } else if is_punct(c0) {
            p
        } else {
            return None;
        };
        let mut e = q;
        while e < self.b.len() {
            let (c, l) = self.at(e);
            if !is_punct(c) {
                break;
            }
            e += l;
        }
        while let Some(&c) = self.b.get(e) {
            if c == b'\r' || c == b'\n' || (slash && c == b'/') {
                e += 1;
            } else {
                break;
            }
        }
        Some(e)
    }

    fn numbers(&self, p: usize) -> usize {
        let mut e = p;
        for _ in 0..3 {
            if e < self.b.len() && self.at(e).0 & NUMBER != 0 {
                e += self.at(e).1;
            } else {
                break;
            }
        }
        e
    }

    /// The end of the o200k piece at `p` when every character that decides it is ASCII
    /// (the text's first non-ASCII byte may end a piece, as the pattern reads it); `None`
    /// otherwise, and [`Self::o200k`] takes the piece. The same branches in the same
    /// order, on a byte table.
    #[inline(always)]
    fn o200k_ascii(&self, p: usize) -> Option<usize> {
        let (b, t, n) = (self.b, &self.cls.byte, self.b.len());
        let class = |i: usize| t[b[i] as usize];
        let c0 = class(p);
        if c0 & NON_ASCII != 0 {
            return None;
        }
        let c1 = if p + 1 < n { class(p + 1) } else { 0 };
        if p + 1 < n && c1 & NON_ASCII != 0 {
            return None;
        }
        // The word branches: `[upper]*[lower]+` or else `[upper]+[lower]*`, after an
        // optional prefix; on ASCII both end where the lower run ends.
        let word = if c0 & LETTER != 0 {
            Some(p)
        } else if is_prefix(c0) && p + 1 < n && c1 & LETTER != 0 {
            Some(p + 1)
        } else {
            None
        };
        if let Some(i) = word {
            let i = ascii_run(b, ascii_run(b, i, b'A', b'Z'), b'a', b'z');
            if i < n && class(i) & NON_ASCII != 0 {
                return None;
            }
            return Some(if b.get(i) == Some(&b'\'') {
                self.with_contraction(i)
            } else {
                i
            });
        }
        if c0 & NUMBER != 0 {
            let mut i = p;
            while i < n && i < p + 3 && class(i) & NUMBER != 0 {
                i += 1;
            }
            if i < n && i < p + 3 && class(i) & NON_ASCII != 0 {
                return None;
            }
            return Some(i);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let punct = if b[p] == b' ' && p + 1 < n && is_punct(c1) {
            Some(p + 1)
        } else if is_punct(c0) {
            Some(p)
        } else {
            None
        };
        if let Some(mut i) = punct {
            while i < n && is_punct(class(i)) {
                if class(i) & NON_ASCII != 0 {
                    return None;
                }
                i += 1;
            }
            while i < n && matches!(b[i], b'\r' | b'\n' | b'/') {
                i += 1;
            }
            return Some(i);
        }
        if c0 & SPACE != 0 {
            let mut r = p;
            while r < n && class(r) & SPACE != 0 {
                r += 1;
            }
            if r < n && class(r) & NON_ASCII != 0 {
                return None;
            }
            // `\s*[\r\n]+` up to the run's last newline, else `\s+(?!\S)` (all but the
            // last space before a non-space), else `\s+`.
            if let Some(j) = b[p..r].iter().rposition(|&c| c == b'\r' || c == b'\n') {
                return Some(p + j + 1);
            }
            return Some(if r == n || r - 1 == p { r } else { r - 1 });
        }
        Some(p + 1)
    }

    /// [`Self::o200k_ascii`] read off the text's class [`Block`]s: each run (upper, lower,
    /// digits, punctuation, spaces) ends at one `trailing_zeros` of its window, with no
    /// branch per byte. A run that reaches the 64-byte window's end goes to
    /// [`Self::o200k_ascii`].
    #[inline(always)]
    fn o200k_masked(&self, blocks: &[Block], p: usize) -> Option<usize> {
        let b = self.b;
        let wide = window(blocks, p, |x| x.wide);
        // The first two characters decide the branch: ASCII, or the Unicode matcher's.
        if wide & 0b11 != 0 {
            return None;
        }
        let upper = window(blocks, p, |x| x.upper);
        let lower = window(blocks, p, |x| x.lower);
        let c0 = self.cls.byte[b[p] as usize];
        // The word branches: `[upper]*[lower]+` or else `[upper]+[lower]*`, after an
        // optional prefix; on ASCII both end where the lower run ends.
        let letter = upper | lower;
        let word = if letter & 1 != 0 {
            Some(0)
        } else if is_prefix(c0) && letter & 2 != 0 {
            Some(1)
        } else {
            None
        };
        if let Some(i) = word {
            let r = i + (!upper >> i).trailing_zeros();
            if r >= 64 {
                return self.o200k_ascii(p);
            }
            let e = r + (!lower >> r).trailing_zeros();
            if e >= 64 {
                return self.o200k_ascii(p);
            }
            if wide >> e & 1 != 0 {
                return None;
            }
            let e = p + e as usize;
            return Some(if b.get(e) == Some(&b'\'') {
                self.with_contraction(e)
            } else {
                e
            });
        }
        if c0 & NUMBER != 0 {
            let d = (!window(blocks, p, |x| x.digit)).trailing_zeros().min(3);
            if d < 3 && wide >> d & 1 != 0 {
                return None;
            }
            return Some(p + d as usize);
        }
        // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
        let punct = window(blocks, p, |x| x.punct);
        let start = if b[p] == b' ' && punct & 2 != 0 {
            Some(1)
        } else if punct & 1 != 0 {
            Some(0)
        } else {
            None
        };
        if let Some(i) = start {
            let e = i + (!punct >> i).trailing_zeros();
            if e >= 64 {
                return self.o200k_ascii(p);
            }
            // A character past ASCII may be punctuation too: the Unicode matcher's piece.
            if wide >> e & 1 != 0 {
                return None;
            }
            let e = e + (!window(blocks, p, |x| x.tail) >> e).trailing_zeros();
            if e >= 64 {
                return self.o200k_ascii(p);
            }
            return Some(p + e as usize);
        }
        if c0 & SPACE != 0 {
            let r = (!window(blocks, p, |x| x.space)).trailing_zeros();
            if r >= 64 {
                return self.o200k_ascii(p);
            }
            if wide >> r & 1 != 0 {
                return None;
            }
            // `\s*[\r\n]+` up to the run's last newline, else `\s+(?!\S)` (all but the
            // last space before a non-space), else `\s+`.
            let newlines = window(blocks, p, |x| x.newline) & ((1 << r) - 1);
            if newlines != 0 {
                return Some(p + (64 - newlines.leading_zeros()) as usize);
            }
            let r = p + r as usize;
            return Some(if r == b.len() || r - 1 == p { r } else { r - 1 });
        }
        Some(p + 1)
    }

    /// o200k_base: `[^\r\n\p{L}\p{N}]?[upper]*[lower]+(c)?|[^\r\n\p{L}\p{N}]?[upper]+[lower]*(c)?
    /// |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    fn o200k(&self, p: usize) -> usize {
        let (c0, l0) = self.at(p);
        let prefixed = is_prefix(c0) && p + l0 < self.b.len();
        const CASED: u8 = CASED_UPPER | CASED_LOWER;
        // The two word branches need a cased character first, after the prefix or at p.
        let word_may_follow = c0 & CASED != 0 || (prefixed && self.at(p + l0).0 & CASED != 0);
        if word_may_follow {
            if let Some(e) = prefixed
                .then(|| self.upper_star_lower_plus(p + l0))
                .flatten()
                .or_else(|| self.upper_star_lower_plus(p))
                .or_else(|| {
                    prefixed
                        .then(|| self.upper_plus_lower_star(p + l0))
                        .flatten()
                })
                .or_else(|| self.upper_plus_lower_star(p))
            {
                return e;
            }
        }
        if c0 & NUMBER != 0 {
            return self.numbers(p);
        }
        if let Some(e) = self.punct(p, c0, true) {
            return e;
        }
        if c0 & SPACE != 0 {
            return self.spaces(p);
        }
        p + l0
    }

    /// cl100k_base: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
    /// | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
    fn cl100k(&self, p: usize) -> usize {
        if let Some(e) = self.contraction(p) {
            return e;
        }
        let (c0, l0) = self.at(p);
        if is_prefix(c0) && p + l0 < self.b.len() && self.at(p + l0).0 & LETTER != 0 {
            return self.run(p + l0, LETTER);
        }
        if c0 & LETTER != 0 {
            return self.run(p, LETTER);
        }
        if c0 & NUMBER != 0 {
            return self.numbers(p);
        }
        if let Some(e) = self.punct(p, c0, false) {
            return e;
        }
        if c0 & SPACE != 0 {
            return self.spaces(p);
        }
        p + l0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(vocab: Vocab, text: &str) -> Vec<&str> {
        let tok = match vocab {
            Vocab::O200k => bpe_openai::o200k_base(),
            Vocab::Cl100k => bpe_openai::cl100k_base(),
        };
        tok.split(text).collect()
    }

    fn same(text: &str) {
        for (vocab, ours) in [
            (Vocab::O200k, split(Vocab::O200k, text)),
            (Vocab::O200k, split_scalar(Vocab::O200k, text)),
            (Vocab::Cl100k, split(Vocab::Cl100k, text)),
        ] {
            let theirs = reference(vocab, text);
            if ours != theirs {
                let k = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
                panic!(
                    "{vocab:?} splits differ at piece {k}: ours {:?}, regex {:?}\ntext {text:?}",
                    &ours[k..(k + 3).min(ours.len())],
                    &theirs[k..(k + 3).min(theirs.len())]
                );
            }
        }
    }

    #[test]
    fn hand_split_equals_the_regex_on_edge_cases() {
        for t in [
            "",
            "hello world",
            "Hello WORLD it's I'M we'RE they'Ve 'll 'D 'ſ 'S' x'ſt",
            "  leading and trailing  ",
            "a\r\n\r\n  b \n\t c   \n",
            "numbers 1234567 12 3.14 ١٢٣٤ ⅷ",
            "punct!!! ?? ...\n\n/// a/b/ c// \r\n/",
            "CamelCaseWord HTTPServer iPhone ǅemal ǈ ǋ",
            "marks e\u{301}\u{301} \u{301}a \u{301}\u{301} a\u{301}B \u{301}",
            "日本語のテキスト、中文，한국어 текст Ελληνικά",
            "emoji ✅🚀📦 👍🏽 family 👨‍👩‍👧",
            "tabs\t\tand\u{a0}nbsp\u{2028}line\u{3000}ideographic",
            "{\"city\":\"Paris\",\"n\":[1,2,3]}",
            " ",
            "\n",
            "'",
            "a",
            "x  ",
            "\u{301}",
            " \u{301}",
            "ſ's Ks K's",
        ] {
            same(t);
        }
    }

    /// A small deterministic generator (xorshift), so the test needs no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_text(rng: &mut Rng, len: usize) -> String {
        const ALPHABET: &[char] = &[
            ' ', ' ', ' ', '\n', '\r', '\t', '\'', '/', '.', ',', '!', 'a', 'b', 's', 't', 'S',
            'T', 'r', 'e', 'v', 'l', 'd', 'm', 'R', 'E', 'L', 'D', 'M', 'A', 'Z', '0', '7', 'é',
            'É', 'ß', 'ſ', 'K', 'ǅ', '\u{301}', '\u{94d}', 'ʰ', '中', '٣', 'Ⅻ', '\u{a0}',
            '\u{2028}', '\u{3000}', '😀', '🏽', '\u{200d}', '_', '-', '"', '{', '}',
        ];
        (0..len)
            .map(|_| match rng.below(10) {
                0 => char::from_u32(rng.below(0x3_0000) as u32).unwrap_or('?'),
                1 => char::from_u32(rng.below(0x3000) as u32).unwrap_or('?'),
                _ => ALPHABET[rng.below(ALPHABET.len() as u64) as usize],
            })
            .collect()
    }

    #[test]
    fn hand_split_equals_the_regex_on_random_unicode() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..3000 {
            let len = rng.below(60) as usize;
            same(&random_text(&mut rng, len));
        }
        same(&random_text(&mut rng, 200_000));
    }

    /// Counts recorded from Python tiktoken (`tests/data/tiktoken_counts.json`).
    #[test]
    fn counts_equal_tiktoken_on_recorded_text() {
        let data: serde_json::Value =
            serde_json::from_str(include_str!("../tests/data/tiktoken_counts.json")).unwrap();
        let rows = data["rows"].as_array().unwrap();
        assert!(rows.len() > 200);
        for row in rows {
            let t = row["text"].as_str().unwrap();
            assert_eq!(Vocab::O200k.count(t) as u64, row["o200k"], "o200k {t:?}");
            assert_eq!(Vocab::Cl100k.count(t) as u64, row["cl100k"], "cl100k {t:?}");
        }
    }

    /// Every string of the recorded provider traffic beside the repository, when present.
    #[test]
    fn hand_split_equals_the_regex_on_recorded_traffic() {
        let dir = std::env::var_os("MEND_SHARED")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
            });
        let mut stack = vec![dir.join("fixtures"), dir.join("fixtures-bedrock-converse")];
        let mut files = 0;
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    same(&text);
                    files += 1;
                }
            }
        }
        if files == 0 {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no recorded traffic under {}",
                dir.display()
            );
            eprintln!(
                "tokens: no recorded traffic under {}, skipped",
                dir.display()
            );
        }
    }

    /// Mostly ASCII text, every ASCII byte possible (controls, `\x0b`, `\x0c`, `\x1c`-`\x1f`,
    /// DEL), with a non-ASCII character now and then: the splitter's ASCII path and its
    /// hand-over to the Unicode one at every kind of boundary.
    fn random_ascii(rng: &mut Rng, len: usize) -> String {
        const COMMON: &[u8] = b"  \n\r\t'/.,!?-_\"{}[]:;0123456789aAbBsStTmMdDlLrReEvVzZ";
        const WIDE: &[char] = &[
            'é', 'É', 'ſ', 'K', '\u{301}', '\u{a0}', '\u{2028}', '中', '٣', '😀',
        ];
        (0..len)
            .map(|_| match rng.below(20) {
                0 => WIDE[rng.below(WIDE.len() as u64) as usize],
                1..=4 => char::from(rng.below(128) as u8),
                _ => char::from(COMMON[rng.below(COMMON.len() as u64) as usize]),
            })
            .collect()
    }

    #[test]
    fn hand_split_equals_the_regex_on_random_ascii() {
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        for _ in 0..5000 {
            let len = rng.below(40) as usize;
            same(&random_ascii(&mut rng, len));
        }
        same(&random_ascii(&mut rng, 200_000));
        for c in 0..128u8 {
            for d in 0..128u8 {
                same(&format!(
                    "{}{}a {}",
                    char::from(c),
                    char::from(d),
                    char::from(c)
                ));
            }
        }
    }

    /// The class masks of every byte value at every position, SIMD against byte by byte,
    /// and against the splitter's class table (a letter, digit, space and newline there
    /// is one in the blocks).
    #[test]
    fn class_blocks_agree_with_the_byte_table() {
        for start in 0..=255u8 {
            let chunk: [u8; 16] = std::array::from_fn(|i| start.wrapping_add(i as u8 * 17));
            assert_eq!(classify_16(chunk), classify_16_bytes(chunk), "{chunk:?}");
        }
        let t = &CLASSES.byte;
        for c in 0..=255u8 {
            let mut blocks = Vec::new();
            classify(&[c], &mut blocks);
            let k = blocks[0];
            let bit = |m: u64| m & 1 != 0;
            assert_eq!(bit(k.lower), t[c as usize] & LOWER != 0 && c < 0x80, "{c}");
            assert_eq!(bit(k.upper), t[c as usize] & UPPER != 0 && c < 0x80, "{c}");
            assert_eq!(bit(k.digit), t[c as usize] & NUMBER != 0 && c < 0x80, "{c}");
            assert_eq!(bit(k.space), t[c as usize] & SPACE != 0 && c < 0x80, "{c}");
            assert_eq!(
                bit(k.newline),
                t[c as usize] & NEWLINE != 0 && c < 0x80,
                "{c}"
            );
            assert_eq!(bit(k.wide), t[c as usize] & NON_ASCII != 0, "{c}");
            assert_eq!(bit(k.punct), c < 0x80 && is_punct(t[c as usize]), "{c}");
            assert_eq!(bit(k.tail), matches!(c, b'\r' | b'\n' | b'/'), "{c}");
            assert_eq!(blocks[1], Block::default());
        }
    }

    /// The o200k pieces read off the class blocks equal the byte-table matcher's, on
    /// `text` and on every prefix and suffix of it when `cuts` (so that each boundary
    /// falls at every offset of a 64-byte block and at the text's end).
    fn same_as_scalar(text: &str, cuts: bool) {
        let check = |t: &str| {
            let (ours, theirs) = (split(Vocab::O200k, t), split_scalar(Vocab::O200k, t));
            if ours != theirs {
                let k = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
                panic!(
                    "blocks and table differ at piece {k}: {:?} against {:?}\ntext {t:?}",
                    &ours[k..(k + 3).min(ours.len())],
                    &theirs[k..(k + 3).min(theirs.len())]
                );
            }
        };
        check(text);
        if cuts {
            for (i, _) in text.char_indices() {
                check(&text[i..]);
                check(&text[..i]);
            }
        }
    }

    #[test]
    fn block_split_equals_the_table_split_cut_anywhere() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for k in 0..300 {
            let len = rng.below(200) as usize;
            let t = if k % 3 == 0 {
                random_text(&mut rng, len)
            } else {
                random_ascii(&mut rng, len)
            };
            same_as_scalar(&t, true);
        }
        // Runs about a block long, of every class, at every offset.
        for run in ["a", "A", "7", " ", "\n", "!", "/", "\r\n", " \t", "é"] {
            for len in [1, 2, 3, 15, 16, 17, 62, 63, 64, 65, 66, 127, 128, 129, 200] {
                let body = run.repeat(len);
                for lead in ["", "x", " ", "Ab", "1", "?", " '", "é"] {
                    same_as_scalar(&format!("{lead}{body}"), false);
                    same_as_scalar(&format!("{lead}{body}x y"), false);
                    same_as_scalar(&format!("{lead}{body}é"), false);
                    same_as_scalar(&format!("{lead}{body}'s"), false);
                }
                same_as_scalar(&format!("{body} {body}\n{body}"), true);
            }
        }
    }

    /// Every text of the trim benchmark's corpus (`bench/trim_tokenizers.py` writes it),
    /// when present.
    #[test]
    fn block_split_equals_the_table_split_on_the_trim_corpus() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/corpus/trim_items.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("tokens: no {}, skipped", path.display());
            return;
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let item: serde_json::Value = serde_json::from_str(line).unwrap();
            let t = item["text"].as_str().unwrap();
            same_as_scalar(t, false);
            assert_eq!(Vocab::O200k.count(t) as u64, item["o200k"], "o200k {t:?}");
        }
    }

    mod blocks_against_the_table {
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_mix_of_ascii_and_unicode_splits_alike(
                t in "([a-zA-Z0-9 \\n\\r\\t'/.,!?_-]{0,80}|[ \\PC]{0,8}|\\PC{0,4})*"
            ) {
                super::same_as_scalar(&t, t.len() < 300);
            }

            #[test]
            fn any_string_splits_alike(t in any::<String>()) {
                super::same_as_scalar(&t, true);
            }
        }
    }

    /// The merge that counts a piece that is not one token, held against `bpe-openai`'s
    /// encoder piece by piece: pieces of random text of both kinds, and long pieces (past
    /// the merge's limit too).
    #[test]
    fn merge_counts_equal_bpe_openai_per_piece() {
        let mut rng = Rng(7);
        for vocab in [Vocab::O200k, Vocab::Cl100k] {
            let l = vocab.loaded();
            let bpe = &l.tokenizer.bpe;
            let mut texts: Vec<String> = (0..400)
                .map(|k| {
                    let len = rng.below(300) as usize;
                    if k % 2 == 0 {
                        random_text(&mut rng, len)
                    } else {
                        random_ascii(&mut rng, len)
                    }
                })
                .collect();
            for n in [9, 17, 40, 63, 64, 65, 100] {
                texts.push("ab".repeat(n));
                texts.push("xq".repeat(n));
                texts.push("!?".repeat(n));
                texts.push("é".repeat(n));
                texts.push("zyzzogeton".repeat(n / 4 + 1));
            }
            let mut merged = 0;
            for t in &texts {
                for piece in split(vocab, t) {
                    let b = piece.as_bytes();
                    let theirs = bpe.count(b);
                    if l.is_token(b, 0, b.len()) {
                        assert_eq!(theirs, 1, "{vocab:?} {piece:?}");
                    } else {
                        assert_eq!(l.merge_count(b, 0, b.len()), theirs, "{vocab:?} {piece:?}");
                        merged += 1;
                    }
                }
            }
            assert!(merged > 1_000, "{merged}");
        }
    }

    /// Counts through one [`Merged`] kept over many texts (words coming back, the
    /// vocabulary switching now and then) equal counts made afresh.
    #[test]
    fn remembered_merges_count_as_fresh_ones() {
        let mut rng = Rng(11);
        let words: Vec<String> = (0..60)
            .map(|k| {
                let len = rng.below(12) as usize;
                if k % 3 == 0 {
                    random_text(&mut rng, len)
                } else {
                    random_ascii(&mut rng, len)
                }
            })
            .collect();
        let mut merged = Merged::default();
        for k in 0..800 {
            let vocab = if k % 7 == 0 {
                Vocab::Cl100k
            } else {
                Vocab::O200k
            };
            let t = (0..30)
                .map(|_| words[rng.below(60) as usize].as_str())
                .collect::<Vec<_>>()
                .join(" ");
            assert_eq!(
                vocab.count_in(&t, &mut merged),
                vocab.count_in(&t, &mut Merged::default()),
                "{vocab:?} {t:?}"
            );
        }
        assert!(!merged.slots.is_empty());
    }

    #[test]
    fn counts_equal_bpe_openai() {
        let mut rng = Rng(42);
        for _ in 0..300 {
            let len = rng.below(400) as usize;
            let t = random_text(&mut rng, len);
            assert_eq!(
                Vocab::O200k.count(&t),
                bpe_openai::o200k_base().count(&*t),
                "{t:?}"
            );
            assert_eq!(
                Vocab::Cl100k.count(&t),
                bpe_openai::cl100k_base().count(&*t),
                "{t:?}"
            );
        }
    }
}
