// SPDX-License-Identifier: Apache-2.0
// The pickle machine's checkpoint mode (PtCheckpoint, see ptpickle.h): any dict, list, tuple, string, number;
// classes it does not know become inert Objects; the torch rebuild functions and collections.OrderedDict are the
// only calls it understands, and nothing is ever executed.
#include "core/tensor/ptpickle.h"

#include <algorithm>

namespace probescope::tensor::pt {

bool isDangerousGlobal(std::string_view module, std::string_view name)
{
    static constexpr std::array<std::string_view, 34> kModules {
        "os", "posix", "nt", "subprocess", "sys", "shutil", "importlib", "pickle", "_pickle", "marshal", "runpy",
        "code", "codeop", "pty", "socket", "ctypes", "webbrowser", "pathlib", "tempfile", "multiprocessing",
        "threading", "_thread", "signal", "commands", "platform", "types", "operator", "inspect", "pdb", "timeit",
        "gc", "asyncio", "zipimport", "posixpath",
    };
    const std::string_view top = module.substr(0, module.find('.'));
    for (std::string_view m : kModules) {
        if (top == m)
            return true;
    }
    if (top == "builtins" || top == "__builtin__") {
        static constexpr std::array<std::string_view, 14> kData { "set", "frozenset", "bytearray", "bytes", "complex",
                                                                  "slice", "range", "object", "list", "dict",
                                                                  "tuple", "int", "float", "str" };
        return std::find(kData.begin(), kData.end(), name) == kData.end();
    }
    if (top == "io" || top == "_io")
        return name != "BytesIO" && name != "StringIO";
    if (top == "torch" && (module.find("hub") != std::string_view::npos || name == "load"))
        return true;
    return name == "system" || name == "popen" || name.starts_with("exec") || name == "eval"
        || name == "__import__" || name == "getattr" || name == "open";
}

std::optional<PtFailure> PickleMachine::generalStep(std::uint8_t op)
{
    switch (op) {
    case ']':
    case '}':
    case 'l':
    case 'd':
    case 'a':
    case 's':
    case 'e':
    case 'u':
    case '0':
    case '2':
    case '1':
        return generalContainerStep(op);
    case 'U':
    case 'C':
    case 'T':
    case 'B':
    case 'X':
    case 0x8A:
    case 0x8B:
    case 'G':
        return generalValueStep(op);
    case 0x81:
    case 'b':
    case 'i':
    case 'o':
        return generalObjectStep(op);
    case 'Q':
    case 'q':
    case 'r':
        return generalStorageOrMemoStep(op);
    case 'c': // GLOBAL
        return generalGlobal();
    case 'R': // REDUCE
        return generalReduce();
    default: // the opcodes both modes read alike
        return step(op);
    }
}

std::optional<PtFailure> PickleMachine::generalContainerStep(std::uint8_t op)
{
    switch (op) {
    case ']': // EMPTY_LIST
    case '}': // EMPTY_DICT
        return pushContainer(op == ']' ? Kind::List : Kind::Dict, {});
    case 'l': // LIST
    case 'd': { // DICT
        std::size_t start = 0;
        if (auto problem = popItems(op, start))
            return problem;
        std::vector<std::uint32_t> items(m_stack.begin() + static_cast<std::ptrdiff_t>(start), m_stack.end());
        m_stack.resize(start);
        return pushContainer(op == 'l' ? Kind::List : Kind::Dict, std::move(items));
    }
    case 'a': { // APPEND
        if (!available(2))
            return underflow("APPEND");
        const std::uint32_t target = m_stack[m_stack.size() - 2];
        if (!hasContainer(target, true))
            return failure("APPEND to a value that is not a list");
        m_containers[containerOf(target)].push_back(m_stack.back());
        m_stack.pop_back();
        return std::nullopt;
    }
    case 's': { // SETITEM
        if (!available(3))
            return underflow("SETITEM");
        const std::uint32_t target = m_stack[m_stack.size() - 3];
        if (!hasContainer(target, false))
            return failure("SETITEM on a value that is not a dict");
        auto& items = m_containers[containerOf(target)];
        items.push_back(m_stack[m_stack.size() - 2]);
        items.push_back(m_stack.back());
        m_stack.resize(m_stack.size() - 2);
        return std::nullopt;
    }
    case 'e': // APPENDS
    case 'u': { // SETITEMS
        std::size_t start = 0;
        if (auto problem = popItems(op, start))
            return problem;
        auto& items = m_containers[containerOf(m_stack[start - 1])];
        items.insert(items.end(), m_stack.begin() + static_cast<std::ptrdiff_t>(start), m_stack.end());
        m_stack.resize(start);
        return std::nullopt;
    }
    case '0': // POP
        if (!available(1))
            return underflow("POP");
        m_stack.pop_back();
        return std::nullopt;
    case '2': // DUP
        if (!available(1))
            return underflow("DUP");
        m_stack.push_back(m_stack.back());
        return std::nullopt;
    case '1': // POP_MARK
        if (m_marks.empty())
            return failure("POP_MARK without a MARK");
        m_stack.resize(m_marks.back());
        m_marks.pop_back();
        return std::nullopt;
    default:
        return step(op);
    }
}

std::optional<PtFailure> PickleMachine::generalValueStep(std::uint8_t op)
{
    switch (op) {
    case 'U': // SHORT_BINSTRING
    case 'C': // SHORT_BINBYTES
    case 'T': // BINSTRING
    case 'B': { // BINBYTES
        std::size_t length = 0;
        std::string_view b;
        if (!readLength(op == 'U' || op == 'C', length))
            return truncatedFailure();
        if (!readBytes(length, b))
            return declaredTooLong(length);
        return push({ op == 'U' || op == 'T' ? Kind::String : Kind::Bytes, 0, b });
    }
    case 'X': { // BINUNICODE: as in tensor mode, with the length checked before it is trusted
        std::string_view b;
        if (!readBytes(4, b))
            return truncatedFailure();
        const std::uint32_t length = le32(b.data());
        if (!readBytes(length, b))
            return declaredTooLong(length);
        return push({ Kind::String, 0, b });
    }
    case 0x8A: // LONG1
    case 0x8B: { // LONG4
        std::size_t length = 0;
        std::string_view b;
        if (!readLength(op == 0x8A, length))
            return truncatedFailure();
        if (!readBytes(length, b))
            return declaredTooLong(length);
        // Two's complement, little-endian. Longer than 8 bytes: kept as bytes, its value never matters.
        if (length > 8)
            return push({ Kind::Int, 0, b });
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < length; ++i)
            v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b[i])) << (8 * i);
        if (length > 0 && length < 8 && (static_cast<std::uint8_t>(b[length - 1]) & 0x80))
            v |= ~std::uint64_t { 0 } << (8 * length);
        return push(Kind::Int, static_cast<std::int64_t>(v));
    }
    case 'G': { // BINFLOAT, big-endian; kept as its bits
        std::string_view b;
        if (!readBytes(8, b))
            return truncatedFailure();
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
            bits = (bits << 8) | static_cast<std::uint8_t>(b[static_cast<std::size_t>(i)]);
        return push(Kind::Float, static_cast<std::int64_t>(bits));
    }
    default:
        return step(op);
    }
}

std::optional<PtFailure> PickleMachine::generalObjectStep(std::uint8_t op)
{
    switch (op) {
    case 0x81: { // NEWOBJ: cls.__new__(cls, *args), never called
        if (!available(2))
            return underflow("NEWOBJ");
        const std::uint32_t args = m_stack.back();
        const std::uint32_t cls = m_stack[m_stack.size() - 2];
        if (m_values[args].kind != Kind::Tuple)
            return failure("NEWOBJ with arguments that are not a tuple");
        m_stack.resize(m_stack.size() - 2);
        if (m_values[cls].kind == Kind::OrderedDict)
            return pushContainer(Kind::Dict, {});
        if (m_values[cls].kind != Kind::Global)
            return failure("NEWOBJ of a value that is not a class");
        if (auto refused = refuseDangerous("NEWOBJ", cls))
            return refused;
        return pushObject(cls, args);
    }
    case 'b': { // BUILD: obj.__setstate__(state), never called; an inert object keeps the state
        if (!available(2))
            return underflow("BUILD");
        const std::uint32_t state = m_stack.back();
        const std::uint32_t target = m_stack[m_stack.size() - 2];
        m_stack.pop_back();
        if (auto refused = refuseDangerous("BUILD", target))
            return refused;
        if (m_values[target].kind == Kind::Object)
            m_objects[static_cast<std::size_t>(m_values[target].first)].state = state;
        return std::nullopt;
    }
    case 'i': { // INST: module, name, then the arguments above a MARK
        std::string_view module;
        std::string_view name;
        if (!readGlobalName(module, name))
            return failure("INST name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                           + " bytes");
        if (m_marks.empty())
            return failure("INST without a MARK");
        if (auto refused = push({ Kind::Global, 0, joined(module, name) }))
            return refused;
        const std::uint32_t cls = m_stack.back();
        m_stack.pop_back();
        if (auto refused = refuseDangerous("INST", cls))
            return refused;
        const std::size_t start = m_marks.back();
        m_marks.pop_back();
        if (auto problem = makeTuple(m_stack.size() - start))
            return problem;
        const std::uint32_t args = m_stack.back();
        m_stack.pop_back();
        return pushObject(cls, args);
    }
    case 'o': { // OBJ: MARK cls args...
        if (m_marks.empty())
            return failure("OBJ without a MARK");
        const std::size_t start = m_marks.back();
        m_marks.pop_back();
        if (m_stack.size() == start)
            return failure("OBJ with no class above its MARK");
        const std::uint32_t cls = m_stack[start];
        if (m_values[cls].kind != Kind::Global)
            return failure("OBJ of a value that is not a class");
        if (auto refused = refuseDangerous("OBJ", cls))
            return refused;
        if (auto problem = makeTuple(m_stack.size() - start - 1))
            return problem;
        const std::uint32_t args = m_stack.back();
        m_stack.resize(start);
        return pushObject(cls, args);
    }
    default:
        return step(op);
    }
}

std::optional<PtFailure> PickleMachine::generalStorageOrMemoStep(std::uint8_t op)
{
    switch (op) {
    case 'Q': { // BINPERSID: any device name in a checkpoint (npu:0 too); the tensor is only located
        if (!available(1))
            return underflow("BINPERSID");
        const Value& id = m_values[m_stack.back()];
        if (id.kind != Kind::Tuple || id.count != 5 || item(id, 0).kind != Kind::String || item(id, 0).text != "storage"
            || item(id, 1).kind != Kind::StorageType || item(id, 2).kind != Kind::String
            || item(id, 3).kind != Kind::String || item(id, 4).kind != Kind::Int || item(id, 4).number < 0)
            return failure("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
        const std::string_view key = item(id, 2).text;
        if (key.empty() || key.size() > 64 || key.find_first_of(std::string_view("/\0\\.", 4)) != std::string_view::npos)
            return failure("a storage key is empty or names a path");
        const Value storage { Kind::Storage, 0, {}, id.first, id.count };
        m_stack.pop_back();
        return push(storage);
    }
    case 'q':
    case 'r': { // BINPUT, LONG_BINPUT: Python's pickler numbers memo slots from 0, one per object at most
        std::uint32_t id = 0;
        std::string_view b;
        if (op == 'q') {
            std::uint8_t n = 0;
            if (!readByte(n))
                return truncatedFailure();
            id = n;
        } else {
            if (!readBytes(4, b))
                return truncatedFailure();
            id = le32(b.data());
        }
        if (id > m_values.size())
            return failure("memo slot " + std::to_string(id) + " is beyond the " + std::to_string(m_values.size())
                           + " objects made so far");
        return put(id);
    }
    default:
        return step(op);
    }
}

/// The length prefix of a value: one byte (the SHORT_ / LONG1 forms) or four, little-endian.
bool PickleMachine::readLength(bool oneByte, std::size_t& length)
{
    std::string_view b;
    if (!readBytes(oneByte ? 1 : 4, b))
        return false;
    length = oneByte ? static_cast<std::uint8_t>(b[0]) : le32(b.data());
    return true;
}

std::string_view PickleMachine::joined(std::string_view module, std::string_view name)
{
    return { module.data(), static_cast<std::size_t>(name.data() + name.size() - module.data()) };
}

std::pair<std::string_view, std::string_view> PickleMachine::splitGlobal(std::string_view text)
{
    const std::size_t nl = text.find('\n');
    return { text.substr(0, nl), nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1) };
}

std::optional<PtFailure> PickleMachine::generalGlobal()
{
    std::string_view module;
    std::string_view name;
    if (!readGlobalName(module, name))
        return failure("GLOBAL name is not terminated by a newline within " + std::to_string(kMaxGlobalName)
                       + " bytes");
    if (const auto known = knownGlobal(module, name))
        return push(known->kind, known->number);
    return push({ Kind::Global, 0, joined(module, name) });
}

std::optional<PtFailure> PickleMachine::refuseDangerous(const char* opcode, std::uint32_t value) const
{
    if (m_values[value].kind != Kind::Global)
        return std::nullopt;
    const auto [module, name] = splitGlobal(m_values[value].text);
    if (!isDangerousGlobal(module, name))
        return std::nullopt;
    return PtFailure { "tensor.pickle-unsafe",
                       std::string(opcode) + " at pickle offset " + std::to_string(m_opStart) + " would call "
                           + std::string(module) + "." + std::string(name)
                           + ": ProbeScope never runs code from a pickle, and no checkpoint needs this call",
                       m_opStart };
}

std::optional<PtFailure> PickleMachine::generalReduce()
{
    if (!available(2))
        return underflow("REDUCE");
    const std::uint32_t argsId = m_stack.back();
    const std::uint32_t callableId = m_stack[m_stack.size() - 2];
    const Value args = m_values[argsId];
    const Value callable = m_values[callableId];
    if (args.kind != Kind::Tuple)
        return failure("REDUCE with arguments that are not a tuple");
    // Python 3.11's enum members pickle as getattr(EnumClass, "member") (argparse.Namespace args hold enums):
    // an attribute of a class that is itself harmless stays an inert value.
    if (isAttributeOfClass(callable, args)) {
        if (auto refused = refuseDangerous("REDUCE", m_items[args.first]))
            return refused;
        m_stack.resize(m_stack.size() - 2);
        return pushObject(callableId, argsId);
    }
    if (auto refused = refuseDangerous("REDUCE", callableId))
        return refused;
    m_stack.resize(m_stack.size() - 2);
    switch (callable.kind) {
    case Kind::OrderedDict:
        if (args.count != 0)
            return failure("OrderedDict called with arguments (torch.save writes OrderedDict())");
        return pushContainer(Kind::Dict, {});
    case Kind::RebuildTensor:
        return rebuildTensor(args, 6);
    case Kind::Rebuild:
        switch (callable.number) {
        case kRebuildTensorV1:
            return rebuildTensor(args, 4);
        case kRebuildParameter:
        case kRebuildParameterState:
            if (args.count < 3 || item(args, 0).kind != Kind::Tensor)
                return failure("_rebuild_parameter is not called with a tensor");
            return push(item(args, 0));
        default: { // _rebuild_from_type_v2(func, type, args, state)
            if (args.count != 4 || item(args, 2).kind != Kind::Tuple
                || (item(args, 0).kind != Kind::RebuildTensor
                    && !(item(args, 0).kind == Kind::Rebuild && item(args, 0).number == kRebuildTensorV1)))
                return failure("_rebuild_from_type_v2 is not called with a tensor rebuild function");
            return rebuildTensor(item(args, 2), item(args, 0).kind == Kind::RebuildTensor ? 6 : 4);
        }
        }
    case Kind::Global:
        return pushObject(callableId, argsId);
    default:
        return failure("REDUCE calls a " + std::string(callable.kind == Kind::Object ? "Python object" : "value")
                       + " that is not a global (ProbeScope calls nothing)");
    }
}

bool PickleMachine::isAttributeOfClass(const Value& callable, const Value& args) const
{
    if (callable.kind != Kind::Global || args.count != 2 || item(args, 0).kind != Kind::Global
        || item(args, 1).kind != Kind::String)
        return false;
    const auto [module, name] = splitGlobal(callable.text);
    return (module == "builtins" || module == "__builtin__") && name == "getattr";
}

/// (storage, storage_offset, size, stride[, requires_grad, backward_hooks[, metadata]])
std::optional<PtFailure> PickleMachine::rebuildTensor(const Value& args, std::uint32_t minCount)
{
    if (args.count < minCount || args.count > 7 || item(args, 0).kind != Kind::Storage
        || item(args, 1).kind != Kind::Int || !isIntTuple(item(args, 2)) || !isIntTuple(item(args, 3)))
        return failure("a tensor rebuild is not called with (storage, offset, size, stride, ...)");
    return push({ Kind::Tensor, 0, {}, args.first, args.count });
}

bool PickleMachine::hasContainer(std::uint32_t value, bool list) const
{
    const Kind kind = m_values[value].kind;
    return kind == Kind::Object || kind == (list ? Kind::List : Kind::Dict);
}

std::size_t PickleMachine::containerOf(std::uint32_t value) const
{
    const Value& v = m_values[value];
    return v.kind == Kind::Object ? m_objects[v.first].container : v.first;
}

std::optional<PtFailure> PickleMachine::pushContainer(Kind kind, std::vector<std::uint32_t> items)
{
    const bool empty = items.empty();
    m_containers.push_back(std::move(items));
    return push({ kind, empty ? 0 : 1, {}, static_cast<std::uint32_t>(m_containers.size() - 1), 0 });
}

std::optional<PtFailure> PickleMachine::pushObject(std::uint32_t callable, std::uint32_t args)
{
    m_containers.emplace_back();
    m_objects.push_back({ callable, args, kNoValue, static_cast<std::uint32_t>(m_containers.size() - 1) });
    return push({ Kind::Object, 0, {}, static_cast<std::uint32_t>(m_objects.size() - 1), 0 });
}

PtFailure PickleMachine::declaredTooLong(std::size_t length) const
{
    return failure("a value declares " + std::to_string(length) + " bytes but only "
                   + std::to_string(m_stream.size() - m_pos) + " remain in the pickle");
}

} // namespace probescope::tensor::pt
