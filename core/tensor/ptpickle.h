// SPDX-License-Identifier: Apache-2.0
#pragma once
// The pickle machine of the torch.save reader (internal to core/tensor), after Python's pickletools documentation
// for protocols 2 and 3, with LibTorch 1.13's stack effects. One machine, two modes:
// - tensor mode (ptpickle.cpp): exactly the subset torch.save writes for one plain tensor, for loadPt and
//   LibTorch's guard (checkTorchPickle);
// - checkpoint mode (ptpicklecheckpoint.cpp): any container, inert objects, never a call (PtCheckpoint).
#include "core/tensor/ptformat.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace probescope::tensor::pt {

struct StorageKind
{
    std::string_view name; ///< the class name in the torch module
    std::optional<DType> dtype;
};

inline constexpr std::array<StorageKind, 18> kStorageKinds { {
    { "BoolStorage", DType::Bool },
    { "ByteStorage", DType::UInt8 },
    { "CharStorage", DType::Int8 },
    { "ShortStorage", DType::Int16 },
    { "IntStorage", DType::Int32 },
    { "LongStorage", DType::Int64 },
    { "HalfStorage", DType::Float16 },
    { "BFloat16Storage", DType::BFloat16 },
    { "FloatStorage", DType::Float32 },
    { "DoubleStorage", DType::Float64 },
    // Known to LibTorch but not to ProbeScope.
    { "ComplexHalfStorage", std::nullopt },
    { "ComplexFloatStorage", std::nullopt },
    { "ComplexDoubleStorage", std::nullopt },
    { "QInt8Storage", std::nullopt },
    { "QUInt8Storage", std::nullopt },
    { "QInt32Storage", std::nullopt },
    { "QUInt4x2Storage", std::nullopt },
    { "QUInt2x4Storage", std::nullopt },
} };

enum class Kind : std::uint8_t {
    None,
    Bool,
    Int,
    Float,
    String,
    Tuple,
    List,
    Dict,
    RebuildTensor, ///< the torch._utils._rebuild_tensor_v2 global
    OrderedDict,   ///< the collections.OrderedDict global
    StorageType,   ///< number: index into kStorageKinds
    Storage,       ///< a persistent storage reference; items: its 5-tuple
    Tensor,        ///< the result of _rebuild_tensor_v2; items: its argument tuple
    // Only in checkpoint mode (PtCheckpoint): inert values, never executed.
    Bytes,   ///< text: the bytes
    Global,  ///< text: "module\nname", straight from the stream
    Rebuild, ///< an allowlisted torch rebuild function other than _rebuild_tensor_v2; number: RebuildKind
    Object,  ///< an instance of a class ProbeScope does not know, or the result of an inert call; first: m_objects
};

enum RebuildKind : std::int64_t {
    kRebuildTensorV1 = 1,   ///< torch._utils._rebuild_tensor(storage, offset, size, stride)
    kRebuildParameter = 2,  ///< torch._utils._rebuild_parameter(data, requires_grad, hooks)
    kRebuildParameterState = 3, ///< torch._utils._rebuild_parameter_with_state(data, requires_grad, hooks, state)
    kRebuildFromType = 4,   ///< torch._tensor._rebuild_from_type_v2(func, type, args, state)
};

/// An inert object: what it was made from (ids into the value table; kNone = absent).
struct ObjectRecord
{
    std::uint32_t callable = 0;
    std::uint32_t args = 0;
    std::uint32_t state = 0xFFFFFFFF;
    std::uint32_t container = 0; ///< items SETITEM(S)/APPEND(S) gave it (a dict or list subclass)
};

struct Value
{
    Kind kind = Kind::None;
    std::int64_t number = 0;
    std::string_view text;
    std::uint32_t first = 0; ///< tuple items: m_items[first, first + count)
    std::uint32_t count = 0;
};

struct PickleResult
{
    std::vector<Value> values;
    std::vector<std::uint32_t> items;
    std::uint32_t top = 0;
    bool manyStorageKeys = false; ///< LibTorch would read every one of them
    // Checkpoint mode only: list items / dict keys and values (interleaved), and inert objects.
    std::vector<std::vector<std::uint32_t>> containers;
    std::vector<ObjectRecord> objects;
};

/// How far the checkpoint-mode machine may go (PickleLimits, public).
struct MachineLimits
{
    bool general = false; ///< checkpoint mode: any container, inert objects; else exactly torch.save's tensor subset
    std::uint64_t maxObjects = 0;
    std::uint64_t maxMarks = 0;
    std::uint64_t maxStack = 0;
};

/// A global both modes know by name: the torch rebuild functions, collections.OrderedDict, torch.<type>Storage.
struct KnownGlobal
{
    Kind kind = Kind::None;
    std::int64_t number = 0; ///< RebuildKind, or the index into kStorageKinds
};

/// The one table of globals (ptpickle.cpp): tensor mode accepts some of them, checkpoint mode all.
std::optional<KnownGlobal> knownGlobal(std::string_view module, std::string_view name);

/// Modules whose callables could act on the machine (run commands, open files, import code, reach any attribute).
/// The machine never calls anything; a pickle naming one of these in REDUCE/NEWOBJ/BUILD/INST/OBJ is refused
/// because no checkpoint needs them and such a file is hostile.
bool isDangerousGlobal(std::string_view module, std::string_view name);

/// "dict", "list", "plain number", ...: what a value that is not a tensor is, for messages.
std::string describe(Kind kind);

class PickleMachine
{
public:
    explicit PickleMachine(std::string_view stream, MachineLimits limits = {})
        : m_stream(stream)
        , m_limits(limits)
    {
        // torch.save's pickle of one tensor makes about 20 values and 12 memo slots: room for them up front
        // instead of a dozen regrowths per file (the small-tensor pair reads 23,000 files).
        m_values.reserve(32);
        m_items.reserve(32);
        m_stack.reserve(16);
        m_marks.reserve(4);
        m_memo.reserve(16);
    }

    /// Offsets in failures are relative to the stream.
    Outcome<PickleResult> run();

private:
    // ---- Tensor mode (ptpickle.cpp): exactly what torch.save writes for one plain tensor.
    std::optional<PtFailure> step(std::uint8_t op);
    std::optional<PtFailure> global();
    std::optional<PtFailure> persistentLoad();
    /// The locations torch.save writes for CPU and CUDA tensors; the tensor is loaded to the CPU anyway.
    static bool knownLocation(std::string_view text);
    std::optional<PtFailure> reduce();

    // ---- Checkpoint mode (ptpicklecheckpoint.cpp): the opcodes Python's pickler writes at protocols 2 and 3,
    // building inert values. Nothing is ever called: an allowlisted torch rebuild becomes a tensor reference, any
    // other call an Object holding its callable's name and arguments, and a call into a dangerous module is refused.
    std::optional<PtFailure> generalStep(std::uint8_t op);
    /// Containers and the stack: lists, dicts, APPEND(S), SETITEM(S), POP, DUP, POP_MARK.
    std::optional<PtFailure> generalContainerStep(std::uint8_t op);
    /// Strings, bytes, long integers and floats.
    std::optional<PtFailure> generalValueStep(std::uint8_t op);
    /// NEWOBJ, BUILD, INST, OBJ: objects made, never called.
    std::optional<PtFailure> generalObjectStep(std::uint8_t op);
    /// BINPERSID and the memo (BINPUT, LONG_BINPUT) with checkpoint mode's checks.
    std::optional<PtFailure> generalStorageOrMemoStep(std::uint8_t op);
    /// The length prefix of a value: one byte (the SHORT_ / LONG1 forms) or four, little-endian.
    bool readLength(bool oneByte, std::size_t& length);
    static std::string_view joined(std::string_view module, std::string_view name);
    static std::pair<std::string_view, std::string_view> splitGlobal(std::string_view text);
    std::optional<PtFailure> generalGlobal();
    std::optional<PtFailure> refuseDangerous(const char* opcode, std::uint32_t value) const;
    std::optional<PtFailure> generalReduce();
    bool isAttributeOfClass(const Value& callable, const Value& args) const;
    /// (storage, storage_offset, size, stride[, requires_grad, backward_hooks[, metadata]])
    std::optional<PtFailure> rebuildTensor(const Value& args, std::uint32_t minCount);
    bool hasContainer(std::uint32_t value, bool list) const;
    std::size_t containerOf(std::uint32_t value) const;
    std::optional<PtFailure> pushContainer(Kind kind, std::vector<std::uint32_t> items);
    std::optional<PtFailure> pushObject(std::uint32_t callable, std::uint32_t args);
    PtFailure declaredTooLong(std::size_t length) const;

    // ---- The machine itself (both modes): values, tuples, the memo, the stream.
    bool isIntTuple(const Value& v) const;
    const Value& item(const Value& tuple, std::uint32_t i) const { return m_values[m_items[tuple.first + i]]; }
    /// The innermost MARK taken off (its stack position in `start`), or `opcode` "without a MARK".
    std::optional<PtFailure> popMark(const char* opcode, std::size_t& start);
    /// LIST, DICT, APPENDS, SETITEMS (`op`): the MARK taken off as popMark does, then the list or dict below the MARK
    /// that APPENDS/SETITEMS add to, then a dict's items counted in pairs; each failure names the opcode.
    std::optional<PtFailure> popItems(std::uint8_t op, std::size_t& start);
    std::optional<PtFailure> makeTuple(std::size_t count);
    std::optional<PtFailure> put(std::uint32_t id);
    std::optional<PtFailure> get(std::uint32_t id);
    /// GLOBAL's and INST's "module\nname\n".
    bool readGlobalName(std::string_view& module, std::string_view& name) { return readLine(module) && readLine(name); }
    static std::string hex(std::uint8_t value);

    bool available(std::size_t count) const
    {
        const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
        return m_stack.size() >= floor + count;
    }

    std::optional<PtFailure> push(Kind kind, std::int64_t number = 0)
    {
        Value value;
        value.kind = kind;
        value.number = number;
        return push(value);
    }

    std::optional<PtFailure> push(Value value)
    {
        m_stack.push_back(static_cast<std::uint32_t>(m_values.size()));
        m_values.push_back(value);
        return std::nullopt;
    }

    bool readByte(std::uint8_t& out)
    {
        if (m_pos >= m_stream.size())
            return false;
        out = static_cast<std::uint8_t>(m_stream[m_pos++]);
        return true;
    }

    bool readBytes(std::size_t count, std::string_view& out)
    {
        if (m_stream.size() - m_pos < count)
            return false;
        out = m_stream.substr(m_pos, count);
        m_pos += count;
        return true;
    }

    bool readLine(std::string_view& out)
    {
        const std::size_t end = m_stream.find('\n', m_pos);
        if (end == std::string_view::npos || end - m_pos > kMaxGlobalName)
            return false;
        out = m_stream.substr(m_pos, end - m_pos);
        m_pos = end + 1;
        return true;
    }

    PtFailure failure(std::string message) const { return corrupt(std::move(message), m_opStart); }
    PtFailure fail(std::string message) const { return failure(std::move(message)); }
    PtFailure truncated() const { return failure("the pickle ends in the middle of an opcode"); }
    std::optional<PtFailure> truncatedFailure() const { return truncated(); }
    PtFailure underflow(const std::string& what) const { return failure(what + " needs more values than the stack holds"); }

    static constexpr std::uint32_t kNoValue = 0xFFFFFFFF;
    std::string_view m_stream;
    std::size_t m_pos = 0;
    std::uint64_t m_opStart = 0;
    std::vector<Value> m_values;
    std::vector<std::uint32_t> m_items;
    std::vector<std::uint32_t> m_stack;
    std::vector<std::size_t> m_marks;
    std::vector<std::uint32_t> m_memo;
    std::string_view m_firstKey;
    bool m_manyKeys = false;
    MachineLimits m_limits;
    std::vector<std::vector<std::uint32_t>> m_containers;
    std::vector<ObjectRecord> m_objects;
};

} // namespace probescope::tensor::pt
