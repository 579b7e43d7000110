// SPDX-License-Identifier: Apache-2.0
#include "core/ckpt/megatronloader.h"

#include "core/util/fileio.h"
#include "core/util/folderlist.h"

#include <array>
#include <cstdio>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace probescope::ckpt {

namespace {

using tensor::PtCheckpoint;
using Node = PtCheckpoint::Node;

Diagnostic ckptError(const std::filesystem::path& where, std::string message, const char* id = "ckpt.layout")
{
    return makeError(id, fileLocation(where), std::move(message));
}

/// Python's str.replace(old, new): every non-overlapping occurrence, left to right.
std::string replaceAll(std::string text, std::string_view from, std::string_view to)
{
    std::string out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t hit = text.find(from, pos);
        if (hit == std::string::npos)
            break;
        out.append(text, pos, hit - pos);
        out.append(to);
        pos = hit + from.size();
    }
    if (pos == 0)
        return text;
    out.append(text, pos, std::string::npos);
    return out;
}

/// The first match of Python's re.search(r'<word>\.(\d+)\.', text): the position after "<word>." and the digits.
std::optional<std::pair<std::size_t, std::string_view>> findIndex(std::string_view text, std::string_view word)
{
    std::size_t pos = 0;
    while (true) {
        const std::size_t hit = text.find(word, pos);
        if (hit == std::string_view::npos)
            return std::nullopt;
        std::size_t p = hit + word.size();
        std::size_t digitsEnd = p;
        while (digitsEnd < text.size() && text[digitsEnd] >= '0' && text[digitsEnd] <= '9')
            ++digitsEnd;
        if (digitsEnd > p && digitsEnd < text.size() && text[digitsEnd] == '.')
            return std::make_pair(p, text.substr(p, digitsEnd - p));
        pos = hit + 1;
    }
}

std::optional<std::int64_t> parseIndex(std::string_view digits)
{
    std::int64_t v = 0;
    for (const char c : digits) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
            return std::nullopt;
    }
    return v;
}

constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kNameMapping { {
    { "self_attention.linear_qkv.layer_norm_", "input_layernorm." },
    { "language_model.", "" },
    { "encoder", "decoder" },
    { ".input_norm.", ".input_layernorm." },
    { "query_key_value", "linear_qkv" },
    { ".dense.", ".linear_proj." },
    { "post_attention_norm", "pre_mlp_layernorm" },
    { "dense_h_to_4h", "linear_fc1" },
    { "dense_4h_to_h", "linear_fc2" },
    { "mlp.local_experts", "mlp.experts.local_experts" },
    { "final_norm", "final_layernorm" },
    { "word_embeddings_for_head", "output_layer" },
} };

// both weights and bias are partitioned in column parallel; only weights in row parallel (msprobe's lists)
constexpr std::array<std::string_view, 4> kColumnParallel { "linear_qkv", "linear_fc1", "word_embeddings.weight",
                                                             "output_layer.weight" };
constexpr std::array<std::string_view, 2> kRowParallel { "linear_fc2.weight", "linear_proj.weight" };

bool containsAny(std::string_view key, const auto& names)
{
    for (std::string_view n : names) {
        if (key.find(n) != std::string_view::npos)
            return true;
    }
    return false;
}

/// Python's str.strip() and int() of latest_checkpointed_iteration.txt.
std::string_view stripped(std::string_view text)
{
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    return text;
}

std::optional<std::int64_t> parsePythonInt(std::string_view text)
{
    bool negative = false;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        negative = text.front() == '-';
        text.remove_prefix(1);
    }
    if (text.empty() || text.size() > 18)
        return std::nullopt;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return std::nullopt;
    }
    const auto v = parseIndex(text);
    return v ? std::optional<std::int64_t>(negative ? -*v : *v) : std::nullopt;
}

struct Partition
{
    std::vector<std::string> order; ///< keys in insertion order (Python dict)
    std::unordered_map<std::string, std::vector<Piece>> pieces;
};

class Loader
{
public:
    Loader(const LogSink& log, const tensor::PickleLimits& limits)
        : m_log(log)
        , m_limits(limits)
    {
    }

    Result<MegatronCheckpoint> load(const std::filesystem::path& path)
    {
        auto folder = parseIteration(path);
        if (!folder)
            return folder.error();
        MegatronCheckpoint out;
        out.iterFolder = *folder;

        auto entries = listFolder(*folder, 1u << 20, FolderOrder::ByName);
        if (!entries)
            return entries.error();
        std::string firstRank;
        for (const FolderEntry& e : *entries) {
            if (e.name.starts_with("mp_rank_")) {
                firstRank = e.name;
                break;
            }
        }
        if (firstRank.empty())
            return ckptError(*folder, "No checkpoint rank directories found in " + folder->string());
        auto first = openRank(*folder / firstRank / "model_optim_rng.pt");
        if (!first)
            return first.error();
        std::array<std::int64_t, 4> sizes {};
        const std::array<std::string_view, 4> names { "tensor_model_parallel_size", "pipeline_model_parallel_size",
                                                      "expert_model_parallel_size", "num_experts" };
        const PtCheckpoint& f = **first;
        const auto args = f.find(f.root(), "args");
        if (!args || f.type(*args) != PtCheckpoint::Type::Object)
            return ckptError(f.path(), "the checkpoint holds no 'args' (Megatron's argparse.Namespace), from which msprobe "
                                       "reads the parallel sizes");
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto v = f.attribute(*args, names[i]);
            if (i == 3 && v && f.type(*v) == PtCheckpoint::Type::None)
                continue; // num_experts None: no MoE
            if (!v || f.type(*v) != PtCheckpoint::Type::Int || f.integer(*v) < (i == 3 ? 0 : 1)
                || f.integer(*v) > (1 << 20))
                return ckptError(f.path(), "args." + std::string(names[i]) + " is missing or not a positive integer");
            sizes[i] = f.integer(*v);
        }
        const auto [tpSize, ppSize, epSize, numExperts] = sizes;

        for (std::int64_t ep = 0; ep < epSize; ++ep) {
            std::int64_t layersPerStage = 0;
            for (std::int64_t pp = 0; pp < ppSize; ++pp) {
                Partition partition;
                for (std::int64_t tp = 0; tp < tpSize; ++tp) {
                    char rank[64];
                    if (ppSize > 1)
                        std::snprintf(rank, sizeof rank, "mp_rank_%02lld_%03lld", static_cast<long long>(tp),
                                      static_cast<long long>(pp));
                    else
                        std::snprintf(rank, sizeof rank, "mp_rank_%02lld", static_cast<long long>(tp));
                    std::string rankDir = rank;
                    if (epSize > 1) {
                        std::snprintf(rank, sizeof rank, "_%03lld", static_cast<long long>(ep));
                        rankDir += rank;
                    }
                    auto file = openRank(*folder / rankDir / "model_optim_rng.pt");
                    if (!file)
                        return file.error();
                    if (auto problem = addWeights(*file, partition))
                        return *problem;
                }
                if (partition.order.empty())
                    return ckptError(*folder, "No state loaded.");
                if (layersPerStage == 0)
                    layersPerStage = numLayersPerStage(partition);
                for (const std::string& key : partition.order) {
                    auto merged = consolidate(key, partition.pieces[key]);
                    if (!merged)
                        return merged.error();
                    auto name = realLayerName(key, layersPerStage, ppSize, pp);
                    if (!name)
                        return ckptError(*folder, "parameter name " + key + " contains '/', which msprobe's "
                                                  "name/vpp-stage split cannot take");
                    if (numExperts)
                        *name = realExpertName(*name, numExperts / epSize, ep);
                    out.params.insert_or_assign(*name, std::move(*merged));
                }
            }
        }
        m_log(Severity::Info, "Found " + std::to_string(out.params.size()) + " total parameters across all ranks");
        return out;
    }

private:
    Result<std::filesystem::path> parseIteration(const std::filesystem::path& path)
    {
        auto entries = listFolder(path, 1u << 20, FolderOrder::ByName);
        if (!entries)
            return ckptError(path, "Checkpoint directory not found or not readable: " + entries.error().message);
        std::string iteration = "None";
        std::filesystem::path folder = path;
        bool tracker = false;
        for (const FolderEntry& e : *entries)
            tracker = tracker || e.name == "latest_checkpointed_iteration.txt";
        if (tracker) {
            const auto trackerPath = path / "latest_checkpointed_iteration.txt";
            auto text = readTextFile(trackerPath);
            if (!text)
                return text.error();
            const std::string_view latest = stripped(*text);
            if (latest == "release") {
                // msprobe 26 fails here (f'iter_{None:07d}'); Megatron keeps such a checkpoint in release/.
                iteration = "release";
                folder = path / "release";
            } else {
                const auto it = parsePythonInt(latest);
                if (!it)
                    return ckptError(trackerPath, "The latest_checkpointed_iteration is supposed to be `release` or an "
                                                  "int. But " + std::string(latest) + " is found.");
                char name[40];
                std::snprintf(name, sizeof name, "iter_%07lld", static_cast<long long>(*it));
                iteration = std::to_string(*it);
                folder = path / name;
            }
        } else {
            // re.findall(r'iter_(\d{7})', path)[0]: the first such name anywhere in the path as given
            const std::string text = path.string();
            for (std::size_t pos = text.find("iter_"); pos != std::string::npos; pos = text.find("iter_", pos + 1)) {
                if (text.size() - pos >= 12) {
                    const std::string_view digits = std::string_view(text).substr(pos + 5, 7);
                    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                        iteration = std::to_string(*parseIndex(digits));
                        break;
                    }
                }
            }
        }
        m_log(Severity::Info, "Loaded checkpoint from iteration " + iteration);
        auto check = listFolder(folder, 1u << 20, FolderOrder::ByName);
        if (!check)
            return ckptError(folder, "Checkpoint directory not found: " + folder.string());
        return folder;
    }

    /// Each rank file is opened once (the first one also gave the parallel sizes). msprobe's check_link: the file
    /// must not be a symbolic link.
    Result<std::shared_ptr<const PtCheckpoint>> openRank(const std::filesystem::path& file)
    {
        if (auto it = m_open.find(file.string()); it != m_open.end())
            return it->second;
        auto entries = listFolder(file.parent_path(), 1u << 20, FolderOrder::ByName);
        if (!entries)
            return ckptError(file, "cannot read the rank folder: " + entries.error().message, "ckpt.missing-rank");
        const FolderEntry* entry = nullptr;
        for (const FolderEntry& e : *entries) {
            if (e.name == file.filename().string())
                entry = &e;
        }
        if (!entry)
            return ckptError(file, "the rank file is missing (msprobe would warn and merge the other ranks, which "
                                   "changes the shapes; ProbeScope refuses)",
                             "ckpt.missing-rank");
        if (entry->kind == FolderEntry::Kind::Symlink)
            return ckptError(file, "the rank file is a symbolic link, which msprobe refuses", "ckpt.symlink");
        auto opened = tensor::openPtCheckpoint(file, m_limits);
        if (!opened)
            return opened.error();
        auto shared = std::make_shared<const PtCheckpoint>(std::move(*opened));
        m_open.emplace(file.string(), shared);
        return shared;
    }

    /// get_weights_from_state_dict + _get_parameter: tensors of `model` (or model0, model1, ... with VPP).
    std::optional<Diagnostic> addWeights(const std::shared_ptr<const PtCheckpoint>& file, Partition& partition)
    {
        const PtCheckpoint& f = *file;
        if (f.type(f.root()) != PtCheckpoint::Type::Dict)
            return ckptError(f.path(), "the checkpoint is not a dict");
        if (const auto model = f.find(f.root(), "model"))
            return flatten(file, *model, "", 0, 0, partition);
        for (int vpp = 0;; ++vpp) {
            const auto model = f.find(f.root(), "model" + std::to_string(vpp));
            if (!model)
                return std::nullopt;
            if (auto problem = flatten(file, *model, "", vpp, 0, partition))
                return problem;
        }
    }

    std::optional<Diagnostic> flatten(const std::shared_ptr<const PtCheckpoint>& file, Node dict,
                                      const std::string& prefix, int vpp, std::size_t depth, Partition& partition)
    {
        const PtCheckpoint& f = *file;
        if (f.type(dict) != PtCheckpoint::Type::Dict)
            return std::nullopt; // msprobe iterates .items(): a model that is not a dict fails there; nothing to add
        if (depth >= m_limits.maxDepth)
            return ckptError(f.path(), "call  exceeds the recursion limit (the model's dicts nest deeper than "
                                           + std::to_string(m_limits.maxDepth) + ")",
                             "tensor.pickle-limit");
        // A dict referenced from many places is walked each time (as Python does): bound the total work, so that a
        // pickle nesting shared dicts cannot make it exponential.
        m_walked += f.size(dict);
        if (m_walked > m_limits.maxObjects)
            return ckptError(f.path(), "the model's dicts hold more than " + std::to_string(m_limits.maxObjects)
                                           + " entries in all (shared dicts counted each time they are reached)",
                             "tensor.pickle-limit");
        // A Python dict holds a key once, with the value set last: a pickle that sets a key twice must not add
        // a second shard of it.
        std::unordered_map<std::string, std::size_t> last;
        for (std::size_t i = 0; i < f.size(dict); ++i) {
            const Node k = f.key(dict, i);
            if (f.type(k) != PtCheckpoint::Type::String)
                return ckptError(f.path(), "a model dict has a key that is not a string");
            last[f.text(k)] = i;
        }
        for (std::size_t i = 0; i < f.size(dict); ++i) {
            const Node k = f.key(dict, i);
            if (last[f.text(k)] != i)
                continue;
            // '.'.join([prefix, k]).strip('.')
            std::string name = prefix + "." + f.text(k);
            const std::size_t b = name.find_first_not_of('.');
            name = b == std::string::npos ? std::string() : name.substr(b, name.find_last_not_of('.') - b + 1);
            const Node v = f.value(dict, i);
            const auto type = f.type(v);
            if (type == PtCheckpoint::Type::Dict) {
                if (auto problem = flatten(file, v, name, vpp, depth + 1, partition))
                    return problem;
            } else if (type == PtCheckpoint::Type::Tensor) {
                std::string key = mapToMcoreName(std::move(name)) + "/" + std::to_string(vpp);
                auto [it, fresh] = partition.pieces.try_emplace(key);
                if (fresh)
                    partition.order.push_back(key);
                it->second.push_back(Piece { file, v });
            }
        }
        return std::nullopt;
    }

    static std::int64_t numLayersPerStage(const Partition& partition)
    {
        std::int64_t most = -1;
        for (const std::string& key : partition.order) {
            if (const auto hit = findIndex(key, "layers.")) {
                if (const auto v = parseIndex(hit->second))
                    most = std::max(most, *v);
            }
        }
        return most < 0 ? 1 : most + 1;
    }

    Result<MergedParam> consolidate(const std::string& key, const std::vector<Piece>& pieces)
    {
        MergedParam merged;
        merged.pieces = pieces;
        merged.axis = containsAny(key, kColumnParallel) ? 0 : containsAny(key, kRowParallel) ? 1 : -1;
        const tensor::PtTensorRef& first = pieces.front().ref();
        merged.shape = first.shape;
        if (merged.axis >= 0) {
            const auto axis = static_cast<std::size_t>(merged.axis);
            for (std::size_t i = 0; i < pieces.size(); ++i) {
                const tensor::PtTensorRef& ref = pieces[i].ref();
                bool fits = ref.shape.size() > axis && ref.shape.size() == first.shape.size();
                for (std::size_t d = 0; fits && d < ref.shape.size(); ++d)
                    fits = d == axis || ref.shape[d] == first.shape[d];
                if (!fits || !ref.dtype)
                    return ckptError(pieces[i].file->path(),
                                     "cannot concatenate the tensor parallel shards of " + key + " along dimension "
                                         + std::to_string(axis) + ": shape " + pyTupleText(ref.shape) + " here, "
                                         + pyTupleText(first.shape) + " in " + pieces.front().file->path().string()
                                         + (ref.dtype ? "" : " (element type " + ref.dtypeName + " is not supported)"),
                                     "ckpt.shard-shape");
                if (i > 0)
                    merged.shape[axis] += ref.shape[axis];
            }
        } else if (pieces.size() > 1 && !allClose(pieces)) {
            m_log(Severity::Warning, "Inconsistent values for " + key + " across TP ranks");
        }
        merged.numel = 1;
        for (const std::int64_t d : merged.shape)
            merged.numel *= d;
        return merged;
    }

    /// np.allclose(tensors[0], t) for every other shard (rtol 1e-5, atol 1e-8, NaN never close).
    bool allClose(const std::vector<Piece>& pieces);

    static std::optional<std::string> realLayerName(const std::string& key, std::int64_t layersPerStage,
                                                    std::int64_t ppSize, std::int64_t ppRank)
    {
        const std::size_t slash = key.find('/');
        if (slash == std::string::npos || key.find('/', slash + 1) != std::string::npos)
            return std::nullopt;
        const std::string name = key.substr(0, slash);
        const auto hit = findIndex(key, "layers.");
        if (!hit)
            return name;
        const auto local = parseIndex(hit->second);
        const auto vpp = parseIndex(std::string_view(key).substr(slash + 1));
        if (!local || !vpp)
            return name;
        const std::int64_t real = *local + (ppSize * *vpp + ppRank) * layersPerStage;
        return replaceAll(name, "layers." + std::to_string(*local), "layers." + std::to_string(real));
    }

    static std::string realExpertName(const std::string& name, std::int64_t perRank, std::int64_t epRank)
    {
        const auto hit = findIndex(name, "experts.");
        if (!hit)
            return name;
        const auto local = parseIndex(hit->second);
        if (!local)
            return name;
        return replaceAll(name, "experts." + std::to_string(*local), "experts." + std::to_string(*local + epRank * perRank));
    }

    const LogSink& m_log;
    tensor::PickleLimits m_limits;
    std::unordered_map<std::string, std::shared_ptr<const PtCheckpoint>> m_open;
    std::uint64_t m_walked = 0;
};

} // namespace

std::string pyTupleText(const std::vector<std::int64_t>& shape)
{
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i)
        out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + (shape.size() == 1 ? ",)" : ")");
}

std::string mapToMcoreName(std::string name)
{
    for (const auto& [from, to] : kNameMapping)
        name = replaceAll(std::move(name), from, to);
    return name;
}

// Defined in ckptcompare.cpp: streams a piece's elements as float32.
bool piecesAllClose(const std::vector<Piece>& pieces);

bool Loader::allClose(const std::vector<Piece>& pieces)
{
    return piecesAllClose(pieces);
}

Result<MegatronCheckpoint> loadMegatronCheckpoint(const std::filesystem::path& path, const LogSink& log,
                                                  const tensor::PickleLimits& limits)
{
    try {
        return Loader(log, limits).load(path);
    } catch (const std::bad_alloc&) {
        return ckptError(path, "out of memory while loading the checkpoint", "ckpt.memory");
    }
}

} // namespace probescope::ckpt
