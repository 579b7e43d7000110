// SPDX-License-Identifier: Apache-2.0
#include "core/dump/dumpwriter.h"

#include "core/util/pytext.h"
#include "core/util/outputfile.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace probescope::dump {

// ---------------------------------------------------------------------------------------------------
// Python's number and string spelling

void appendPyFloat(std::string& out, double v)
{
    // json.dump(allow_nan=True) spells the non-finite values as JavaScript does; the rest is repr().
    if (std::isnan(v))
        out += "NaN";
    else if (std::isinf(v))
        out += v < 0 ? "-Infinity" : "Infinity";
    else
        appendPyFloatRepr(out, v);
}

// ---------------------------------------------------------------------------------------------------
// PyJsonWriter

PyJsonWriter::PyJsonWriter(std::string& out, unsigned depth)
    : m_out(out)
    , m_depth(depth)
{
}

void PyJsonWriter::lineBreak(std::size_t level)
{
    m_out += '\n';
    m_out.append(level, ' ');
}

void PyJsonWriter::beginValue()
{
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (m_nonEmpty.empty())
        return;
    // An array element: "," after the previous one, then a line of its own.
    if (m_nonEmpty.back())
        m_out += ',';
    m_nonEmpty.back() = true;
    lineBreak(m_depth + m_nonEmpty.size());
}

void PyJsonWriter::openContainer(char c)
{
    beginValue();
    m_out += c;
    m_nonEmpty.push_back(false);
}

void PyJsonWriter::closeContainer(char c)
{
    const bool nonEmpty = m_nonEmpty.back();
    m_nonEmpty.pop_back();
    if (nonEmpty)
        lineBreak(m_depth + m_nonEmpty.size());
    m_out += c;
}

void PyJsonWriter::beginObject() { openContainer('{'); }
void PyJsonWriter::endObject() { closeContainer('}'); }
void PyJsonWriter::beginArray() { openContainer('['); }
void PyJsonWriter::endArray() { closeContainer(']'); }

void PyJsonWriter::key(std::string_view k)
{
    if (m_nonEmpty.back())
        m_out += ',';
    m_nonEmpty.back() = true;
    lineBreak(m_depth + m_nonEmpty.size());
    appendPyString(m_out, k);
    m_out += ": ";
    m_afterKey = true;
}

void PyJsonWriter::string(std::string_view s)
{
    beginValue();
    appendPyString(m_out, s);
}

void PyJsonWriter::integer(std::int64_t v)
{
    beginValue();
    std::array<char, 24> buf {};
    const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    m_out.append(buf.data(), res.ptr);
}

void PyJsonWriter::number(double v)
{
    beginValue();
    appendPyFloat(m_out, v);
}

void PyJsonWriter::boolean(bool b)
{
    beginValue();
    m_out += b ? "true" : "false";
}

void PyJsonWriter::null()
{
    beginValue();
    m_out += "null";
}

// ---------------------------------------------------------------------------------------------------
// Files

namespace {

Diagnostic ioError(const fs::path& path, const std::string& what, int err)
{
    return makeError("dumpwriter.io", fileLocation(path),
                     what + ": " + std::generic_category().message(err));
}

/// pwrite() all of `data` at `offset`, retrying short writes and EINTR.
std::optional<Diagnostic> writeAt(int fd, std::string_view data, std::uint64_t offset, const fs::path& path)
{
    while (!data.empty()) {
        const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return ioError(path, "cannot write", errno);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
        offset += static_cast<std::uint64_t>(n);
    }
    return std::nullopt;
}

Result<std::string> readWhole(int fd, const fs::path& path)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return ioError(path, "cannot stat", errno);
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return ioError(path, "cannot read back", n < 0 ? errno : EIO);
        done += static_cast<std::size_t>(n);
    }
    return text;
}

void closeFd(int& fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

} // namespace

namespace {

/// Through util's one atomic writer. ReplaceMode::Allowed: the writer puts its own files in place and
/// rewrites their tails, as msprobe's dumper rewrites the rank folder it owns.
std::optional<Diagnostic> writeFileAtomically(const fs::path& path, std::string_view content)
{
    if (const auto failure = probescope::writeFileAtomically(path, content, ReplaceMode::Allowed))
        return makeError("dumpwriter.io", fileLocation(path), failure->message);
    return std::nullopt;
}

/// Puts `initial` in place through rename() (so the file never exists empty or half-written, even
/// after a kill) and opens it for further writes. Read-write: finish() reads construct.json and
/// stack.json back to rewrite them.
Result<int> createWith(const fs::path& path, std::string_view initial)
{
    if (auto problem = writeFileAtomically(path, initial))
        return *problem;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return ioError(path, "cannot open", errno);
    return fd;
}

} // namespace

Result<std::unique_ptr<DumpWriter>> DumpWriter::create(const fs::path& rankDir, DumpWriterHeader header)
{
    std::error_code ec;
    fs::create_directories(rankDir, ec);
    if (ec)
        return makeError("dumpwriter.io", fileLocation(rankDir),
                         "cannot create the folder: " + ec.message());

    std::unique_ptr<DumpWriter> w(new DumpWriter());
    w->m_dir = rankDir;
    w->m_dumpPath = rankDir / header.dumpFileName;
    w->m_header = std::move(header);

    // construct.json and stack.json first: whenever dump.json is there, they are too.
    if (w->m_header.withConstruct) {
        if (auto problem = w->openObjectFile(w->m_construct, rankDir / "construct.json"))
            return *problem;
    }
    if (w->m_header.withStack) {
        if (auto problem = w->openObjectFile(w->m_stack, rankDir / "stack.json"))
            return *problem;
    }

    // The header and the opening of "data" appear at once, so dump.json is never there without them.
    std::string head;
    PyJsonWriter json(head);
    json.beginObject();
    json.key("task");
    json.string(w->m_header.task);
    json.key("level");
    json.string(w->m_header.level);
    json.key("framework");
    json.string(w->m_header.framework);
    json.key("dump_data_dir");
    if (w->m_header.dumpDataDir)
        json.string(*w->m_header.dumpDataDir);
    else
        json.null();
    json.key("data");
    head += '{';
    auto fd = createWith(w->m_dumpPath, head);
    if (!fd)
        return fd.error();
    w->m_dumpFd = *fd;
    w->m_dumpEnd = head.size();
    return w;
}

DumpWriter::~DumpWriter()
{
    if (!m_finished)
        finish();
    closeFd(m_dumpFd);
    closeFd(m_construct.fd);
    closeFd(m_stack.fd);
}

std::optional<Diagnostic> DumpWriter::openObjectFile(ObjectFile& file, const fs::path& path)
{
    file.path = path;
    auto fd = createWith(path, "{}");
    if (!fd)
        return fd.error();
    file.fd = *fd;
    file.closeAt = 1;
    file.members = 0;
    return std::nullopt;
}

std::optional<Diagnostic> DumpWriter::addEntry(std::string_view key, std::string_view valueText)
{
    if (m_finished)
        return makeError("dumpwriter.finished", fileLocation(m_dumpPath),
                         "entry added after finish() without resume()");
    m_scratch.clear();
    m_scratch += m_entries == 0 ? "\n  " : ",\n  ";
    appendPyString(m_scratch, key);
    m_scratch += ": ";
    m_scratch += valueText;
    if (auto problem = writeAt(m_dumpFd, m_scratch, m_dumpEnd, m_dumpPath))
        return problem;
    m_dumpEnd += m_scratch.size();
    ++m_entries;
    return std::nullopt;
}

namespace {

constexpr std::uint64_t kPageSize = 4096; // the smallest unit the kernel copies a write in

/// Whether a write starting at `offset` may be cut after its first byte (a page boundary follows it).
bool boundaryAfterFirstByte(std::uint64_t offset) { return (offset + 1) % kPageSize == 0; }

} // namespace

std::optional<Diagnostic> DumpWriter::replaceTail(ObjectFile& file, std::string_view tail)
{
    // The safe, slower way: the file's text up to closeAt plus `tail`, put in place by rename().
    auto text = readWhole(file.fd, file.path);
    if (!text)
        return text.error();
    std::string& t = *text;
    t.resize(static_cast<std::size_t>(file.closeAt));
    t += tail;
    if (auto problem = writeFileAtomically(file.path, t))
        return problem;
    closeFd(file.fd); // it still refers to the replaced file
    file.fd = ::open(file.path.c_str(), O_RDWR | O_CLOEXEC);
    if (file.fd < 0)
        return ioError(file.path, "cannot reopen", errno);
    file.finalTail = tail.size() == 2;
    return std::nullopt;
}

std::optional<Diagnostic> DumpWriter::addMember(ObjectFile& file, std::string_view memberText)
{
    if (file.fd < 0)
        return std::nullopt; // this file is not written (e.g. debug level)
    if (m_finished)
        return makeError("dumpwriter.finished", fileLocation(file.path),
                         "member added after finish() without resume()");
    // Two old bytes ("\n}") astride a page boundary could mix with new ones in a cut write: go back
    // to a one-byte "}" first.
    if (file.finalTail && file.members > 0 && boundaryAfterFirstByte(file.closeAt)) {
        if (auto problem = replaceTail(file, "}"))
            return problem;
    }
    // Overwrites the closing text with ",\n member}" in one write (see the class comment).
    m_scratch.clear();
    m_scratch += file.members == 0 ? "\n " : ",\n ";
    m_scratch += memberText;
    const std::size_t closeOffset = m_scratch.size();
    m_scratch += '}';
    if (auto problem = writeAt(file.fd, m_scratch, file.closeAt, file.path))
        return problem;
    file.closeAt += closeOffset;
    file.finalTail = false;
    ++file.members;
    return std::nullopt;
}

std::optional<Diagnostic> DumpWriter::addConstruct(std::string_view key, std::string_view parent)
{
    std::string member;
    appendPyString(member, key);
    member += ": ";
    if (parent.empty())
        member += "null";
    else
        appendPyString(member, parent);
    return addMember(m_construct, member);
}

std::optional<Diagnostic> DumpWriter::addStack(std::string_view key, const std::vector<std::string>& frames)
{
    std::string member;
    appendPyString(member, key);
    member += ": ";
    PyJsonWriter json(member, 1);
    json.beginArray();
    for (const std::string& frame : frames)
        json.string(frame);
    json.endArray();
    return addMember(m_stack, member);
}

std::optional<Diagnostic> DumpWriter::finishObjectFile(ObjectFile& file)
{
    if (file.fd < 0 || file.finalTail || file.members == 0)
        return std::nullopt; // "{}" is final already
    // "}" -> "\n}": in place unless the write could be cut after its first byte.
    if (boundaryAfterFirstByte(file.closeAt))
        return replaceTail(file, "\n}");
    if (auto problem = writeAt(file.fd, "\n}", file.closeAt, file.path))
        return problem;
    file.finalTail = true;
    return std::nullopt;
}

std::optional<Diagnostic> DumpWriter::finish()
{
    if (m_finished)
        return std::nullopt;
    m_finished = true;
    // Appended, so an interrupted close still leaves a prefix with every entry.
    const std::string_view tail = m_entries == 0 ? "}\n}" : "\n }\n}";
    auto problem = writeAt(m_dumpFd, tail, m_dumpEnd, m_dumpPath);
    // The object files are rewritten even when dump.json failed: they do not depend on it.
    auto constructProblem = finishObjectFile(m_construct);
    auto stackProblem = finishObjectFile(m_stack);
    if (problem)
        return problem;
    return constructProblem ? constructProblem : stackProblem;
}

std::optional<Diagnostic> DumpWriter::abandon()
{
    if (m_finished)
        return std::nullopt;
    m_finished = true;
    // A failed entry write may have put part of its text behind the last complete entry.
    std::optional<Diagnostic> problem;
    if (::ftruncate(m_dumpFd, static_cast<off_t>(m_dumpEnd)) != 0)
        problem = ioError(m_dumpPath, "cannot cut back", errno);
    auto constructProblem = finishObjectFile(m_construct);
    auto stackProblem = finishObjectFile(m_stack);
    if (problem)
        return problem;
    return constructProblem ? constructProblem : stackProblem;
}

std::optional<Diagnostic> DumpWriter::resume()
{
    if (!m_finished)
        return std::nullopt;
    // Cutting the closing text off leaves a prefix again, as during the first session.
    if (::ftruncate(m_dumpFd, static_cast<off_t>(m_dumpEnd)) != 0)
        return ioError(m_dumpPath, "cannot reopen", errno);
    // construct.json and stack.json keep their final "\n}": the next member replaces it.
    m_finished = false;
    return std::nullopt;
}

} // namespace probescope::dump
