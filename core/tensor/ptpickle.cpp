// SPDX-License-Identifier: Apache-2.0
// The pickle machine (see ptpickle.h): its loop and value helpers, and tensor mode — exactly the subset
// torch.save writes for one plain tensor, with LibTorch 1.13's stack effects.
#include "core/tensor/ptpickle.h"

#include <algorithm>

namespace probescope::tensor::pt {

std::optional<KnownGlobal> knownGlobal(std::string_view module, std::string_view name)
{
    struct Entry
    {
        std::string_view module;
        std::string_view name;
        Kind kind;
        std::int64_t number;
    };
    static constexpr std::array<Entry, 6> kKnown { {
        { "torch._utils", "_rebuild_tensor_v2", Kind::RebuildTensor, 0 },
        { "torch._utils", "_rebuild_tensor", Kind::Rebuild, kRebuildTensorV1 },
        { "torch._utils", "_rebuild_parameter", Kind::Rebuild, kRebuildParameter },
        { "torch._utils", "_rebuild_parameter_with_state", Kind::Rebuild, kRebuildParameterState },
        { "torch._tensor", "_rebuild_from_type_v2", Kind::Rebuild, kRebuildFromType },
        { "collections", "OrderedDict", Kind::OrderedDict, 0 },
    } };
    for (const Entry& e : kKnown) {
        if (e.module == module && e.name == name)
            return KnownGlobal { e.kind, e.number };
    }
    if (module == "torch") {
        for (std::size_t i = 0; i < kStorageKinds.size(); ++i) {
            if (kStorageKinds[i].name == name)
                return KnownGlobal { Kind::StorageType, static_cast<std::int64_t>(i) };
        }
    }
    return std::nullopt;
}

/// Offsets in failures are relative to the stream.
Outcome<PickleResult> PickleMachine::run()
{
    std::uint8_t op = 0;
    if (!readByte(op) || op != 0x80)
        return fail("the pickle does not start with a PROTO opcode");
    std::uint8_t protocol = 0;
    if (!readByte(protocol))
        return truncated();
    if (protocol != 2 && !(m_limits.general && protocol == 3))
        return fail("pickle protocol " + std::to_string(protocol) + " (torch.save writes protocol 2)");
    while (true) {
        m_opStart = m_pos;
        if (!readByte(op))
            return truncated();
        if (op == '.') { // STOP
            if (!m_marks.empty())
                return fail("the pickle stops with an unclosed MARK");
            if (m_stack.size() != 1)
                return fail("the pickle stops with " + std::to_string(m_stack.size()) + " values instead of 1");
            return PickleResult { std::move(m_values), std::move(m_items),      m_stack.back(),
                                  m_manyKeys,          std::move(m_containers), std::move(m_objects) };
        }
        if (m_limits.general) {
            if (m_values.size() > m_limits.maxObjects)
                return PtFailure { "tensor.pickle-limit",
                                   "the pickle makes more than " + std::to_string(m_limits.maxObjects)
                                       + " objects (ProbeScope's bound)",
                                   m_opStart };
            if (m_stack.size() > m_limits.maxStack || m_marks.size() > m_limits.maxMarks)
                return PtFailure { "tensor.pickle-limit",
                                   "the pickle nests deeper than ProbeScope's bound (" + std::to_string(m_stack.size())
                                       + " values on the stack, " + std::to_string(m_marks.size()) + " marks)",
                                   m_opStart };
            if (auto problem = generalStep(op))
                return std::move(*problem);
            continue;
        }
        if (auto problem = step(op))
            return std::move(*problem);
    }
}

std::optional<PtFailure> PickleMachine::step(std::uint8_t op)
{
    switch (op) {
    case '(': // MARK
        m_marks.push_back(m_stack.size());
        return std::nullopt;
    case ')': // EMPTY_TUPLE
        return push({ Kind::Tuple, 0, {}, static_cast<std::uint32_t>(m_items.size()), 0 });
    case ']': // EMPTY_LIST
        return push(Kind::List);
    case '}': // EMPTY_DICT
        return push(Kind::Dict);
    case 'N': // NONE
        return push(Kind::None);
    case 0x88: // NEWTRUE
    case 0x89: // NEWFALSE
        return push(Kind::Bool, op == 0x88 ? 1 : 0);
    case 'K': { // BININT1
        std::string_view b;
        if (!readBytes(1, b))
            return truncatedFailure();
        return push(Kind::Int, static_cast<std::uint8_t>(b[0]));
    }
    case 'M': { // BININT2
        std::string_view b;
        if (!readBytes(2, b))
            return truncatedFailure();
        return push(Kind::Int, le16(b.data()));
    }
    case 'J': { // BININT
        std::string_view b;
        if (!readBytes(4, b))
            return truncatedFailure();
        return push(Kind::Int, static_cast<std::int32_t>(le32(b.data())));
    }
    case 0x8A: { // LONG1: LibTorch reads only the 8-byte form
        std::uint8_t length = 0;
        std::string_view b;
        if (!readByte(length) || !readBytes(length, b))
            return truncatedFailure();
        if (length != 8)
            return failure("LONG1 of " + std::to_string(length) + " bytes (LibTorch reads only 8)");
        return push(Kind::Int, static_cast<std::int64_t>(le64(b.data())));
    }
    case 'G': { // BINFLOAT: the value itself never matters for a tensor
        std::string_view b;
        if (!readBytes(8, b))
            return truncatedFailure();
        return push(Kind::Float);
    }
    case 'X': { // BINUNICODE
        std::string_view b;
        if (!readBytes(4, b))
            return truncatedFailure();
        const std::uint32_t length = le32(b.data());
        if (!readBytes(length, b))
            return truncatedFailure();
        return push({ Kind::String, 0, b });
    }
    case 't': { // TUPLE
        if (m_marks.empty())
            return failure("TUPLE without a MARK");
        const std::size_t start = m_marks.back();
        m_marks.pop_back();
        return makeTuple(m_stack.size() - start);
    }
    case 0x85: // TUPLE1
    case 0x86: // TUPLE2
    case 0x87: { // TUPLE3
        const std::size_t count = op - 0x84u;
        if (!available(count))
            return underflow("TUPLE" + std::to_string(count));
        return makeTuple(count);
    }
    case 'l': // LIST
    case 'd': { // DICT
        std::size_t start = 0;
        if (auto problem = popItems(op, start))
            return problem;
        const bool empty = m_stack.size() == start;
        m_stack.resize(start);
        return push(op == 'l' ? Kind::List : Kind::Dict, empty ? 0 : 1);
    }
    case 'e': // APPENDS
    case 'u': { // SETITEMS
        std::size_t start = 0;
        if (auto problem = popItems(op, start))
            return problem;
        if (m_stack.size() > start)
            m_values[m_stack[start - 1]].number = 1; // no longer empty
        m_stack.resize(start);
        return std::nullopt;
    }
    case 'q': { // BINPUT
        std::uint8_t id = 0;
        if (!readByte(id))
            return truncatedFailure();
        return put(id);
    }
    case 'r': { // LONG_BINPUT
        std::string_view b;
        if (!readBytes(4, b))
            return truncatedFailure();
        return put(le32(b.data()));
    }
    case 'h': { // BINGET
        std::uint8_t id = 0;
        if (!readByte(id))
            return truncatedFailure();
        return get(id);
    }
    case 'j': { // LONG_BINGET
        std::string_view b;
        if (!readBytes(4, b))
            return truncatedFailure();
        return get(le32(b.data()));
    }
    case 'c': // GLOBAL
        return global();
    case 'Q': // BINPERSID
        return persistentLoad();
    case 'R': // REDUCE
        return reduce();
    default: // includes SETITEM, which LibTorch 1.13 cannot unpickle either
        return failure("opcode 0x" + hex(op) + " is not one torch.save writes for a tensor");
    }
}

std::optional<PtFailure> PickleMachine::global()
{
    std::string_view module;
    std::string_view name;
    if (!readGlobalName(module, name))
        return failure("GLOBAL name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                       + " bytes");
    // torch.save's tensor needs only these three of the known globals.
    if (const auto known = knownGlobal(module, name);
        known && (known->kind == Kind::RebuildTensor || known->kind == Kind::OrderedDict || known->kind == Kind::StorageType))
        return push(known->kind, known->number);
    if (module == "torch" && name.size() > 7 && name.ends_with("Storage"))
        return failure("unknown storage type torch." + std::string(name));
    PtFailure problem { "tensor.pt-not-tensor",
                        "the file holds a Python object of type " + std::string(module) + "." + std::string(name)
                            + ", which ProbeScope cannot read as a plain tensor",
                        m_opStart };
    return problem;
}

std::optional<PtFailure> PickleMachine::persistentLoad()
{
    if (!available(1))
        return underflow("BINPERSID");
    const Value& id = m_values[m_stack.back()];
    if (id.kind != Kind::Tuple || id.count != 5)
        return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
    const Value& tag = item(id, 0);
    const Value& type = item(id, 1);
    const Value& key = item(id, 2);
    const Value& location = item(id, 3);
    const Value& numel = item(id, 4);
    if (tag.kind != Kind::String || tag.text != "storage" || type.kind != Kind::StorageType
        || key.kind != Kind::String || location.kind != Kind::String || numel.kind != Kind::Int)
        return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
    if (key.text.empty() || key.text.find_first_of(std::string_view("/\0", 2)) != std::string_view::npos)
        return failure("a storage key is empty or names a path");
    if (!knownLocation(location.text))
        return failure("storage location \"" + std::string(location.text) + "\" is not a device LibTorch knows");
    if (numel.number < 0)
        return failure("a storage has a negative size");
    if (m_firstKey.empty())
        m_firstKey = key.text;
    else if (key.text != m_firstKey)
        m_manyKeys = true;
    const Value storage { Kind::Storage, 0, {}, id.first, id.count };
    m_stack.pop_back();
    return push(storage);
}

/// The locations torch.save writes for CPU and CUDA tensors; the tensor is loaded to the CPU anyway.
bool PickleMachine::knownLocation(std::string_view text)
{
    if (text == "cpu" || text == "cuda")
        return true;
    if (!text.starts_with("cuda:") || text.size() == 5 || text.size() > 8)
        return false;
    return std::all_of(text.begin() + 5, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<PtFailure> PickleMachine::reduce()
{
    if (!available(2))
        return underflow("REDUCE");
    const Value args = m_values[m_stack.back()];
    const Value callable = m_values[m_stack[m_stack.size() - 2]];
    if (args.kind != Kind::Tuple)
        return failure("REDUCE with arguments that are not a tuple");
    if (callable.kind == Kind::OrderedDict) {
        if (args.count != 0)
            return failure("OrderedDict called with arguments (torch.save writes OrderedDict())");
        m_stack.resize(m_stack.size() - 2);
        return push(Kind::Dict);
    }
    if (callable.kind != Kind::RebuildTensor)
        return failure("REDUCE of a value that is not a known callable");
    // (storage, storage_offset, size, stride, requires_grad, backward_hooks)
    if (args.count != 6 || item(args, 0).kind != Kind::Storage || item(args, 1).kind != Kind::Int
        || !isIntTuple(item(args, 2)) || !isIntTuple(item(args, 3)) || item(args, 4).kind != Kind::Bool
        || item(args, 5).kind != Kind::Dict || item(args, 5).number != 0)
        return failure("_rebuild_tensor_v2 is not called with (storage, offset, size, stride, requires_grad, "
                       "OrderedDict())");
    m_stack.resize(m_stack.size() - 2);
    return push({ Kind::Tensor, 0, {}, args.first, args.count });
}

bool PickleMachine::isIntTuple(const Value& v) const
{
    if (v.kind != Kind::Tuple || v.count > kMaxDims)
        return false;
    for (std::uint32_t i = 0; i < v.count; ++i) {
        if (item(v, i).kind != Kind::Int)
            return false;
    }
    return true;
}

std::optional<PtFailure> PickleMachine::popMark(const char* opcode, std::size_t& start)
{
    if (m_marks.empty())
        return failure(std::string(opcode) + " without a MARK");
    start = m_marks.back();
    m_marks.pop_back();
    return std::nullopt;
}

std::optional<PtFailure> PickleMachine::popItems(std::uint8_t op, std::size_t& start)
{
    const bool list = op == 'l' || op == 'e';
    const bool adds = op == 'e' || op == 'u';
    const char* what = op == 'l' ? "LIST" : op == 'd' ? "DICT" : op == 'e' ? "APPENDS" : "SETITEMS";
    if (auto problem = popMark(what, start))
        return problem;
    // Tensor mode makes no Objects, so hasContainer is its plain list/dict test there.
    if (adds && (start == 0 || !hasContainer(m_stack[start - 1], list)))
        return failure(std::string(what) + " with no " + (list ? "list" : "dict") + " below its MARK");
    if (!list && (m_stack.size() - start) % 2 != 0)
        return failure(std::string(what) + " with an odd number of keys and values");
    return std::nullopt;
}

std::optional<PtFailure> PickleMachine::makeTuple(std::size_t count)
{
    const auto first = static_cast<std::uint32_t>(m_items.size());
    m_items.insert(m_items.end(), m_stack.end() - static_cast<std::ptrdiff_t>(count), m_stack.end());
    m_stack.resize(m_stack.size() - count);
    return push({ Kind::Tuple, 0, {}, first, static_cast<std::uint32_t>(count) });
}

std::optional<PtFailure> PickleMachine::put(std::uint32_t id)
{
    if (m_stack.empty())
        return underflow("PUT");
    // Every slot torch's pickler uses costs at least two bytes of stream, which bounds the table.
    if (id >= m_stream.size())
        return failure("memo slot " + std::to_string(id) + " is beyond what this pickle can use");
    if (id >= m_memo.size())
        m_memo.resize(id + 1, kNoValue);
    m_memo[id] = m_stack.back();
    return std::nullopt;
}

std::optional<PtFailure> PickleMachine::get(std::uint32_t id)
{
    if (id >= m_memo.size() || m_memo[id] == kNoValue)
        return failure("GET of memo slot " + std::to_string(id) + ", which was never stored");
    m_stack.push_back(m_memo[id]);
    return std::nullopt;
}

std::string PickleMachine::hex(std::uint8_t value)
{
    static const char digits[] = "0123456789abcdef";
    return { digits[value >> 4], digits[value & 0xF] };
}

std::string describe(Kind kind)
{
    switch (kind) {
    case Kind::Dict:
        return "dict";
    case Kind::List:
        return "list";
    case Kind::Tuple:
        return "tuple";
    case Kind::None:
        return "None";
    case Kind::String:
        return "string";
    case Kind::Int:
    case Kind::Float:
    case Kind::Bool:
        return "plain number";
    case Kind::Storage:
        return "bare storage";
    default:
        return "Python object";
    }
}

} // namespace probescope::tensor::pt
