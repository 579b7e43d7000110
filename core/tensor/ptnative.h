// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "core/tensor/elementstream.h"
#include "core/tensor/tensor.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace probescope::tensor {

/**
 * @brief Reads the bytes of a torch.save archive holding one plain tensor, without LibTorch.
 *
 * Accepts only what torch.save writes for a single dense tensor: a zip of STORED records under one
 * folder (`data.pkl`, `data/<key>`, `version`, and the `byteorder` / `.data/serialization_id`
 * records newer torch adds), and a protocol-2 pickle calling `torch._utils._rebuild_tensor_v2` on
 * one persistent storage. Everything else is refused with the ids loadPt documents. It is meant to
 * be stricter than LibTorch: whatever it accepts, LibTorch reads to the same dtype, shape and bytes.
 * `path` only names the file in diagnostics.
 */
Result<Tensor> parsePtArchive(std::string_view bytes, const std::filesystem::path& path);

/**
 * @brief loadPt with a chosen limit for reading the whole file at once.
 *
 * Files up to `wholeFileLimit` bytes are read with one read(); larger ones with pread() of just
 * the zip directory, the pickle and the storage, so a large tensor is not held twice. loadPt uses
 * a few MiB; tests pass 0 to drive the pread path with small files.
 */
Result<Tensor> loadPtNative(const std::filesystem::path& path, std::uint64_t wholeFileLimit);

/// A .pt file opened to stream its elements (see ElementStream): checked as loadPt checks it.
using PtStream = ElementStream;

/// The streamed readers' whole-file limit: files up to 1 MiB are read whole.
inline constexpr std::uint64_t kPtWholeFileLimit = std::uint64_t { 1 } << 20;

/// Error ids as loadPt. Files up to `wholeFileLimit` bytes are read whole into `buffer`.
inline Result<PtStream> openPtStream(const std::filesystem::path& path, ReadBuffer& buffer)
{
    return openPtStream(path, buffer, kPtWholeFileLimit);
}

/// openPtStream on a file TensorFolder::open opened (its descriptor is taken over; no second open or stat). A
/// file it read whole already (OpenedDataFile::readWhole, into this same `buffer`) is not read again.
inline Result<PtStream> openPtStream(OpenedDataFile file, ReadBuffer& buffer)
{
    return openPtStream(std::move(file), buffer, kPtWholeFileLimit);
}

/// Why a pickle stream was refused, and where.
struct PickleProblem
{
    std::uint64_t offset = 0; ///< byte offset inside the pickle stream
    std::string message;
    bool notATensor = false; ///< well-formed, but holds Python objects LibTorch cannot rebuild
};

/**
 * @brief Dry-runs a torch.save pickle (data.pkl) before LibTorch's unpickler sees it (core/tensortorch's guard).
 *
 * LibTorch 1.13 trusts the stream: a damaged opcode can pop an empty stack, index past a mark or
 * ask for a memo slot billions of entries away, which crashes the process instead of throwing.
 * This runs the native reader's pickle machine, which simulates the stack, marks and memo for exactly the
 * opcodes LibTorch understands and refuses anything that would reach undefined behaviour there: one pickle
 * walker for both readers.
 */
std::optional<PickleProblem> checkTorchPickle(std::string_view stream);

/// Bounds of the checkpoint unpickler (docs/checkpoint-compare.md): a file beyond one is refused with
/// tensor.pickle-limit, never read into memory without bound.
struct PickleLimits
{
    std::uint64_t maxPickleBytes = 1ULL << 30; ///< the data.pkl record
    std::uint64_t maxObjects = 1ULL << 24;     ///< values the pickle makes
    std::uint64_t maxMarks = 1024;             ///< open MARKs (nesting of tuples, lists, dicts being built)
    std::uint64_t maxStack = 1ULL << 22;       ///< values on the stack
    std::uint64_t maxDepth = 400;              ///< nesting a caller may walk (msprobe's recursion bound)
};

/// One tensor of a checkpoint: its elements' place in the file, checked against the archive.
struct PtTensorRef
{
    std::optional<DType> dtype;   ///< nullopt: an element type ProbeScope does not read (dtypeName says which)
    std::string dtypeName;        ///< torch's storage name without "Storage": Float, BFloat16, ...
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;      ///< storage offset, in elements
    std::int64_t numel = 0;
    std::uint64_t storageOffset = 0; ///< file offset of the storage record's bytes
    std::uint64_t storageBytes = 0;
    bool contiguous = true;
};

/**
 * @brief A torch.save checkpoint (model_optim_rng.pt) unpickled into inert values, its storages located, not read.
 *
 * One pickle machine with the single-tensor reader (ptpickle.h), in its checkpoint mode (ptpicklecheckpoint.cpp): any dict, list, tuple,
 * string, number; classes it does not know (argparse.Namespace, enums, ...) become Objects holding their class
 * name, arguments and state (attribute()); the torch rebuild functions (_rebuild_tensor_v2, _rebuild_tensor,
 * _rebuild_parameter[_with_state], _rebuild_from_type_v2) and collections.OrderedDict are the only calls it
 * understands. Nothing is ever executed; a REDUCE/NEWOBJ/BUILD/INST/OBJ naming a dangerous callable (os.system,
 * subprocess, builtins.eval, ...) is refused with tensor.pickle-unsafe naming the opcode and its offset.
 */
class PtCheckpoint
{
public:
    enum class Type : std::uint8_t { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Object, Global, Tensor, Other };
    using Node = std::uint32_t;

    Node root() const;
    Type type(Node node) const;
    std::int64_t integer(Node node) const; ///< Int, Bool
    /// String, Bytes; Global and Object: the (class's) "module.name"
    std::string text(Node node) const;
    std::size_t size(Node node) const;          ///< Tuple and List items; Dict entries
    Node item(Node node, std::size_t i) const;  ///< Tuple, List
    Node key(Node dict, std::size_t i) const;
    Node value(Node dict, std::size_t i) const;
    /// A Dict's value under a string key (the last one, as Python keeps it).
    std::optional<Node> find(Node dict, std::string_view key) const;
    /// An Object's attribute: its BUILD state's entry (argparse.Namespace keeps its fields there).
    std::optional<Node> attribute(Node object, std::string_view name) const;
    const PtTensorRef& tensor(Node node) const;
    const std::filesystem::path& path() const;
    int fd() const; ///< open for reading the storages (pread); closed with the last copy

private:
    friend Result<PtCheckpoint> openPtCheckpoint(const std::filesystem::path&, const PickleLimits&);
    struct Impl;
    std::shared_ptr<const Impl> m_impl;
};

/// Opens through the gate (openRegularFile), reads the zip directory and data.pkl, locates every tensor.
/// Errors name the file and the byte offset: tensor.pt-corrupt, tensor.pickle-unsafe, tensor.pickle-limit, io.*.
Result<PtCheckpoint> openPtCheckpoint(const std::filesystem::path& path, const PickleLimits& limits = {});

} // namespace probescope::tensor
