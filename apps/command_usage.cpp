// The `zerotrain COMMAND --help` texts of the commands whose usage is not beside their own
// option parsing (launch and checkpoint keep theirs).
#include <string>

#include "apps/commands.h"

namespace zt::apps {
namespace {

constexpr const char* kTrainUsage =
    R"(usage: zerotrain train CONFIG [--set section.key=value]...

Trains one rank. Alone it is a single-rank run; started by `zerotrain launch` (or with
torchrun's RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set) it is one rank of many.
--set overrides any key of CONFIG (also as --set=section.key=value); every key is in
docs/CONFIG.md (`zerotrain config docs`).

exit status: 0 success, 1 run-time failure, 2 usage or config error
)";

constexpr const char* kEstimateUsage =
    R"(usage: zerotrain estimate CONFIG [--set section.key=value]... [--world N]
                          [--nproc-per-node R] [--json]

Estimates every byte a rank of CONFIG allocates, per category (parameters, gradients,
optimizer states, activations, comm buffers, workspace, host offload), and the peak with
its phase, by running two training steps of the real code on a meta device that holds no
memory (fast for any model size). Then the same for ZeRO stages 0-3 x offload choices x
world sizes 1..64, and, with runtime.device_memory_limit set, the cheapest configuration
that fits (fewest bytes moved per step). --world N: the number of ranks (default 1).
--nproc-per-node R: ranks per node, as `zerotrain launch` places them (ranks 0..R-1 on the
first node, and so on; default: every rank on one node); with more than one node the bytes
per step are split into those sent inside a node and across nodes.
--json: the report as JSON (format zerotrain-estimate/1).

exit status: 0 report, 1 nothing fits in runtime.device_memory_limit, 2 usage or config error
)";

constexpr const char* kProfileUsage =
    R"(usage: zerotrain profile CONFIG [--set section.key=value]...

Trains runtime.memory_profile_steps steps of CONFIG on one rank, recording every
allocation: run.dir/memory.html (the timeline by category) and run.dir/memory/rank-K.json.
Under `zerotrain launch`, --set runtime.memory_profile=true records every rank.

exit status: 0 success, 1 run-time failure, 2 usage or config error
)";

constexpr const char* kConfigUsage =
    R"(usage: zerotrain config docs
       zerotrain config show CONFIG [--set section.key=value]...

docs: every key with its type, default and meaning, as Markdown (docs/CONFIG.md).
show: the effective config of CONFIG with its overrides, every key, as TOML.

exit status: 0 success, 2 usage or config error
)";

constexpr const char* kPrepareDataUsage =
    R"(usage: zerotrain prepare-data IN... OUT.bin [--tokenizer PATH [--merges PATH]] [--eot-id N]
                              [--val-fraction F [--val-out PATH]] [--overwrite]

Turns text files into a token file for data.path. Each IN is a file or a glob pattern
(quoted: 'docs/*.txt'), expanded in sorted order; a pattern that matches nothing is an
error. Each input file is one document, written in that order into OUT. No output may be
an input, and an output that exists is refused unless --overwrite is given; each is
written to a temp file beside it and moved into place only when complete, so a failure
leaves an earlier one as it was. Inputs are read in chunks, so memory stays small at any
size.

Without --tokenizer: a byte-level vocabulary, each byte one token in [0, 256). It has no
end-of-text token: documents follow each other unseparated unless --eot-id N is given.

--tokenizer PATH   byte-level BPE (GPT-2's scheme), written in llm.c's token file format
                   (uint16 tokens; uint32 when the vocabulary has more than 65536). PATH is
                   a Hugging Face tokenizer.json with a BPE model and the ByteLevel
                   pre-tokenizer (GPT-2's pattern), or GPT-2's vocab.json with merges.txt
                   beside it. The input must be UTF-8. Each document starts with the
                   tokenizer's <|endoftext|> token, as llm.c's fineweb.py writes them (a
                   tokenizer without one needs --eot-id). An added token written in the text
                   (<|endoftext|>) is encoded as that token, as Hugging Face's tokenizers
                   does. Set data.tokenizer to PATH to decode ids later.
--merges PATH      the merges.txt of a vocab.json kept elsewhere
--eot-id N         the token written before each document (byte-level: the vocabulary
                   grows to N + 1 when N >= 256)
--val-fraction F   write the last documents, whole, to a validation file: the fewest that
                   hold at least F of the input bytes (at least one; the first document
                   always stays in OUT); needs two or more documents
--val-out PATH     the validation file (default: OUT's sibling, corpus.bin -> corpus_val.bin)
--overwrite        replace existing outputs (regular files; never a link or a device)

exit status: 0 success, 1 I/O failure or bad input, 2 usage error
)";

constexpr const char* kGenerateUsage =
    R"(usage: zerotrain generate [CONFIG] --checkpoint PATH (--prompt TEXT... | --prompts-file FILE)
                          --max-new-tokens N [--temperature T] [--top-k K] [--seed S]
                          [--set section.key=value]...

Continues each prompt by N tokens with trained weights. PATH is a checkpoint (step-N
directory), a checkpoint.dir (its newest checkpoint), saved at any world size and ZeRO stage,
or a Hugging Face folder (config.json beside model.safetensors or its index). Without
--checkpoint the weights are CONFIG's checkpoint.init_from. Without CONFIG the model is the
checkpoint's (the config its manifest saved) or the folder's config.json's (model.seq_len
its positions, at most 1024: --set model.seq_len=N for more; its tokenizer.json, when there
is one, is data.tokenizer), and --set changes either; no data is read. --prompt may be given several times: the prompts are one batch, of any lengths. A
prompt is encoded with data.tokenizer, or, without one, read as whitespace-separated token
ids (an added token such as <|endoftext|> written in the prompt is that token). Each prompt
+ N must fit in model.seq_len. Prints, on rank 0, one block per prompt in order: the prompt
and its new tokens, decoded through data.tokenizer (without one: the ids), then a newline;
a blank line between blocks. Writes nothing: run.dir is neither claimed nor touched.

options:
  --prompt TEXT         a prompt; repeat it for a batch
  --prompts-file FILE   the prompts, one a line (empty lines skipped), instead of --prompt
  --max-new-tokens N    tokens to add to each prompt
  --temperature T       0: greedy (the most likely token); else softmax(logits / T) (default 1)
  --top-k K             draw only among the K most likely tokens (default 0: every token)
  --seed S              the sampling streams (default 0): prompt b of a batch draws from
                        stream (S, b), so its text does not depend on the other prompts, and
                        the same prompts, seed and weights give the same text on every machine
                        and at any world size

Alone it is one rank; on several (zero.stage=3 decodes a model no rank holds whole):
  zerotrain launch --nproc-per-node N -- zerotrain generate --checkpoint PATH ...
    --set zero.stage=3

exit status: 0 success, 1 run-time failure (a missing or damaged checkpoint, or one saved
from another model than CONFIG's), 2 usage or config error
)";

constexpr const char* kEvalUsage =
    R"(usage: zerotrain eval [CONFIG] [--checkpoint PATH] [--data FILE] [--logits FILE.npy
                     [--overwrite]] [--set section.key=value]...

Prints the validation loss of trained weights on the validation windows, as the val_loss
that train.eval_every logs: the mean loss over the first train.eval_windows samples of
data.val_path (or data.val_fraction's split, or the synthetic stream), the same windows at
every world size and batch split:
  zerotrain: val_loss X over W windows (T tokens)
PATH is a checkpoint (step-N directory), a checkpoint.dir (its newest checkpoint), saved at
any world size and ZeRO stage, or a Hugging Face folder (config.json beside
model.safetensors or its index). Without --checkpoint the weights are CONFIG's
checkpoint.init_from (Hugging Face or `checkpoint export` safetensors). Without CONFIG the
model is the checkpoint's (the config its manifest saved) or the folder's config.json's
(model.seq_len its positions, at most 1024; --set model.seq_len=N for more), and --set
changes either. Runs no step and writes nothing but --logits: run.dir is neither claimed
nor touched. Any world size evaluates any checkpoint: the global batch and grad_accum_steps
are ignored, train.micro_batch_size is the evaluation's micro-batch.

options:
  --data FILE        the validation tokens: token file(s), a glob (data.val_path = FILE)
  --logits FILE.npy  also write the windows' logits, float32, shaped (windows, seq_len,
                     vocabulary) for a language model (numpy.load reads it; 4 bytes a
                     value: 64 windows of 1024 GPT-2 tokens are 13 GB); an existing file is
                     refused unless --overwrite. Each rank writes its windows beside FILE
                     first, so ranks on several nodes need FILE on a shared filesystem.

Alone it is one rank; on several:
  zerotrain launch --nproc-per-node N -- zerotrain eval CONFIG --checkpoint PATH

exit status: 0 success, 1 run-time failure (a missing or damaged checkpoint, or one saved
from another model than CONFIG's), 2 usage or config error
)";

constexpr const char* kDiagnoseUsage =
    R"(usage: zerotrain diagnose RUN_DIR [--world N]

Reads every rank's flight record in RUN_DIR/flight (rank-N.json: the last collectives a rank
was given, written when it stopped on a communication error) and prints what they show, one
finding a line:
  - ranks that left no record (of N ranks; without --world, one more than the highest seen),
  - the first op two ranks issued differently (kind, size, dtype or root) in one group, with
    the step and phase each side was in,
  - per group, the ranks behind the others, and for every rank the op it stopped in.

exit status: 0 findings printed, 1 no flight records or a damaged one, 2 usage error
)";

}  // namespace

const char* command_usage(const std::string& command) {
  if (command == "train") return kTrainUsage;
  if (command == "estimate") return kEstimateUsage;
  if (command == "profile") return kProfileUsage;
  if (command == "config") return kConfigUsage;
  if (command == "prepare-data") return kPrepareDataUsage;
  if (command == "generate") return kGenerateUsage;
  if (command == "eval") return kEvalUsage;
  if (command == "diagnose") return kDiagnoseUsage;
  return nullptr;
}

}  // namespace zt::apps
