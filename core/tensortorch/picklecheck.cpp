// SPDX-License-Identifier: Apache-2.0
// Opcode meanings follow Python's pickle protocol 2 (Lib/pickletools.py documents each one);
// the stack effects are those of LibTorch's Unpickler, which differ from Python's for NEWOBJ and BUILD.
#include "tensortorch/picklecheck.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace probescope::tensor {

namespace {

/// What the dry run needs to know about a value: only tuples and storage types matter.
struct SymbolicValue
{
    enum class Kind : std::uint8_t { Other, StorageType, Tuple };
    Kind kind = Kind::Other;
    std::vector<std::shared_ptr<const SymbolicValue>> items; ///< for tuples
};
using Value = std::shared_ptr<const SymbolicValue>;

constexpr std::uint32_t kMaxMemoId = 1u << 20;
constexpr std::size_t kMaxGlobalName = 256;

class PickleChecker
{
public:
    explicit PickleChecker(std::string_view stream)
        : m_stream(stream)
    {
        m_other = std::make_shared<SymbolicValue>();
        m_storageType = std::make_shared<SymbolicValue>(SymbolicValue { SymbolicValue::Kind::StorageType, {} });
    }

    std::optional<PickleProblem> run()
    {
        std::uint8_t op = 0;
        if (!readByte(op) || op != 0x80)
            return fail("the pickle does not start with a PROTO opcode");
        std::uint8_t protocol = 0;
        if (!readByte(protocol))
            return truncated();
        if (protocol != 2)
            return fail("pickle protocol " + std::to_string(protocol) + " (torch.save writes protocol 2)");

        while (true) {
            m_opStart = m_pos;
            if (!readByte(op))
                return truncated();
            if (auto problem = step(op))
                return problem;
            if (m_stopped)
                return std::nullopt;
        }
    }

private:
    std::optional<PickleProblem> step(std::uint8_t op)
    {
        switch (op) {
        case '(': // MARK
            m_marks.push_back(m_stack.size());
            return std::nullopt;
        case '.': // STOP
            if (!m_marks.empty())
                return fail("the pickle stops with an unclosed MARK");
            if (m_stack.size() != 1)
                return fail("the pickle stops with " + std::to_string(m_stack.size()) + " values instead of 1");
            m_stopped = true;
            return std::nullopt;
        case ')': // EMPTY_TUPLE
            m_stack.push_back(std::make_shared<SymbolicValue>(SymbolicValue { SymbolicValue::Kind::Tuple, {} }));
            return std::nullopt;
        case ']': // EMPTY_LIST
        case '}': // EMPTY_DICT
        case 'N': // NONE
        case 0x88: // NEWTRUE
        case 0x89: // NEWFALSE
            return push();
        case 'K': // BININT1
            return skipThenPush(1);
        case 'M': // BININT2
            return skipThenPush(2);
        case 'J': // BININT
            return skipThenPush(4);
        case 'G': // BINFLOAT
            return skipThenPush(8);
        case 0x8A: { // LONG1
            std::uint8_t length = 0;
            if (!readByte(length))
                return truncated();
            return skipThenPush(length);
        }
        case 'X': { // BINUNICODE
            std::uint32_t length = 0;
            if (!readU32(length))
                return truncated();
            return skipThenPush(length);
        }
        case 't': { // TUPLE
            if (m_marks.empty())
                return fail("TUPLE without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            auto tuple = std::make_shared<SymbolicValue>(SymbolicValue { SymbolicValue::Kind::Tuple, {} });
            tuple->items.assign(m_stack.begin() + static_cast<std::ptrdiff_t>(start), m_stack.end());
            m_stack.resize(start);
            m_stack.push_back(std::move(tuple));
            return std::nullopt;
        }
        case 0x85: // TUPLE1
        case 0x86: // TUPLE2
        case 0x87: { // TUPLE3
            const std::size_t count = op - 0x84u;
            if (!available(count))
                return underflow("TUPLE" + std::to_string(count));
            auto tuple = std::make_shared<SymbolicValue>(SymbolicValue { SymbolicValue::Kind::Tuple, {} });
            tuple->items.assign(m_stack.end() - static_cast<std::ptrdiff_t>(count), m_stack.end());
            m_stack.resize(m_stack.size() - count);
            m_stack.push_back(std::move(tuple));
            return std::nullopt;
        }
        case 'l': // LIST
        case 'd': { // DICT
            if (m_marks.empty())
                return fail(std::string(op == 'l' ? "LIST" : "DICT") + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            // LibTorch reads key/value pairs without checking that the count is even.
            if (op == 'd' && (m_stack.size() - start) % 2 != 0)
                return fail("DICT with an odd number of keys and values");
            m_stack.resize(start);
            return push();
        }
        case 'e': // APPENDS
        case 'u': { // SETITEMS
            if (m_marks.empty())
                return fail(std::string(op == 'e' ? "APPENDS" : "SETITEMS") + " without a MARK");
            const std::size_t start = m_marks.back();
            m_marks.pop_back();
            if (start == 0)
                return fail(std::string(op == 'e' ? "APPENDS" : "SETITEMS") + " with no container below its MARK");
            if (op == 'u' && (m_stack.size() - start) % 2 != 0)
                return fail("SETITEMS with an odd number of keys and values");
            m_stack.resize(start);
            return std::nullopt;
        }
        case 's': // SETITEM
            if (!available(2) || m_stack.size() < 3)
                return underflow("SETITEM");
            m_stack.resize(m_stack.size() - 2);
            return std::nullopt;
        case 'q': { // BINPUT
            std::uint8_t id = 0;
            if (!readByte(id))
                return truncated();
            return put(id);
        }
        case 'r': { // LONG_BINPUT
            std::uint32_t id = 0;
            if (!readU32(id))
                return truncated();
            return put(id);
        }
        case 'h': { // BINGET
            std::uint8_t id = 0;
            if (!readByte(id))
                return truncated();
            return get(id);
        }
        case 'j': { // LONG_BINGET
            std::uint32_t id = 0;
            if (!readU32(id))
                return truncated();
            return get(id);
        }
        case 'c': // GLOBAL
            return global();
        case 0x81: // NEWOBJ: LibTorch pops only the argument tuple
            if (!available(1))
                return underflow("NEWOBJ");
            m_stack.pop_back();
            return std::nullopt;
        case 'R': // REDUCE
        case 'b': // BUILD: LibTorch treats it exactly like REDUCE
            if (!available(2))
                return underflow(op == 'R' ? "REDUCE" : "BUILD");
            m_stack.resize(m_stack.size() - 2);
            return push();
        case 'Q': { // BINPERSID
            if (!available(1))
                return underflow("BINPERSID");
            const Value id = m_stack.back();
            m_stack.pop_back();
            // LibTorch turns element 1 into a ScalarType without a range check; only a value that
            // came from a torch.*Storage global is known to be valid.
            if (id->kind != SymbolicValue::Kind::Tuple || id->items.size() != 5
                || id->items[1]->kind != SymbolicValue::Kind::StorageType)
                return fail("a storage reference is not (\"storage\", torch.<type>Storage, key, location, size)");
            return push();
        }
        default:
            return fail("opcode 0x" + hex(op) + " is not one LibTorch can unpickle");
        }
    }

    std::optional<PickleProblem> global()
    {
        std::string module;
        std::string name;
        if (!readLine(module) || !readLine(name))
            return fail("GLOBAL name is not terminated by a newline within " + std::to_string(kMaxGlobalName) + " bytes");
        if (module == "torch._utils" && name == "_rebuild_tensor_v2")
            return push();
        if (module == "collections" && name == "OrderedDict")
            return push();
        if (module == "torch" && name.size() > 7 && name.ends_with("Storage")) {
            // LibTorch itself refuses names that are not real storage types.
            m_stack.push_back(m_storageType);
            return std::nullopt;
        }
        PickleProblem problem = *fail("the file holds a Python object of type " + module + "." + name
                                      + ", which ProbeScope cannot read as a plain tensor");
        problem.notATensor = true;
        return problem;
    }

    std::optional<PickleProblem> put(std::uint32_t id)
    {
        if (m_stack.empty())
            return underflow("PUT");
        // LibTorch grows its memo table up to the id, so a wild id would allocate gigabytes.
        if (id > kMaxMemoId || id > m_memo.size() + 1024)
            return fail("memo slot " + std::to_string(id) + " is far beyond the " + std::to_string(m_memo.size())
                        + " slots used so far");
        m_memo[id] = m_stack.back();
        return std::nullopt;
    }

    std::optional<PickleProblem> get(std::uint32_t id)
    {
        const auto it = m_memo.find(id);
        if (it == m_memo.end())
            return fail("GET of memo slot " + std::to_string(id) + ", which was never stored");
        m_stack.push_back(it->second);
        return std::nullopt;
    }

    /// Whether `count` values sit above the innermost MARK (pickle ops never reach below one).
    bool available(std::size_t count) const
    {
        const std::size_t floor = m_marks.empty() ? 0 : m_marks.back();
        return m_stack.size() >= floor + count;
    }

    std::optional<PickleProblem> push()
    {
        m_stack.push_back(m_other);
        return std::nullopt;
    }

    std::optional<PickleProblem> skipThenPush(std::size_t bytes)
    {
        if (m_stream.size() - m_pos < bytes)
            return truncated();
        m_pos += bytes;
        return push();
    }

    bool readByte(std::uint8_t& out)
    {
        if (m_pos >= m_stream.size())
            return false;
        out = static_cast<std::uint8_t>(m_stream[m_pos++]);
        return true;
    }

    bool readU32(std::uint32_t& out)
    {
        if (m_stream.size() - m_pos < 4)
            return false;
        out = 0;
        for (int i = 0; i < 4; ++i)
            out |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(m_stream[m_pos++])) << (8 * i);
        return true;
    }

    bool readLine(std::string& out)
    {
        const std::size_t end = m_stream.find('\n', m_pos);
        if (end == std::string_view::npos || end - m_pos > kMaxGlobalName)
            return false;
        out.assign(m_stream.substr(m_pos, end - m_pos));
        m_pos = end + 1;
        return true;
    }

    static std::string hex(std::uint8_t value)
    {
        static const char digits[] = "0123456789abcdef";
        return { digits[value >> 4], digits[value & 0xF] };
    }

    std::optional<PickleProblem> fail(std::string message) const
    {
        return PickleProblem { m_opStart, std::move(message), false };
    }
    std::optional<PickleProblem> truncated() const { return fail("the pickle ends in the middle of an opcode"); }
    std::optional<PickleProblem> underflow(const std::string& what) const
    {
        return fail(what + " needs more values than the stack holds");
    }

    std::string_view m_stream;
    std::size_t m_pos = 0;
    std::uint64_t m_opStart = 0;
    bool m_stopped = false;
    std::vector<Value> m_stack;
    std::vector<std::size_t> m_marks;
    std::unordered_map<std::uint32_t, Value> m_memo;
    Value m_other;
    Value m_storageType;
};

} // namespace

std::optional<PickleProblem> checkTorchPickle(std::string_view stream)
{
    return PickleChecker(stream).run();
}

} // namespace probescope::tensor
