// SPDX-License-Identifier: Apache-2.0
// probescope._C: the C++ half of the Python module `probescope` (docs/collect.md, "The Python module").
// Python's hooks observe the calls and hand names, values and frames over; the collector core keeps msprobe's
// bookkeeping (MsprobeBook: counters, construct.json parents, stack.json frames, the entries and the files'
// text) and this file turns the values a hook sees into msprobe's JSON leaves, as text, in one call per part
// (input_args, output, ...): statistics, md5, the leaf's layout and the .pt files through the collection
// library's own code (leafstats.h), with no Python-level torch call per tensor (msprobe runs four reductions
// and an .item() each, and torch.save per tensor).
//
// Built with NDEBUG like torchcollect.cpp: LibTorch's headers must see the layout LibTorch was built with.
#include "core/collect/backgroundwriter.h"
#include "core/collect/dumpfolder.h"
#include "core/collect/python/configcheckbind.h"
#include "core/collect/leafstats.h"
#include "core/collect/msprobebook.h"
#include "core/collect/msprobescope.h"
#include "core/collect/python/freebenchpy.h"
#include "probescope/collect/config.h"
#include "core/collect/torchtypes.h"
#include "core/util/fileio.h"
#include "core/util/outputfile.h"

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace py = pybind11;
namespace leaf = probescope::collect::leaf;
using probescope::dump::PyJsonWriter;

namespace {

/// Writes `text` to `path` whole, through the one output writer (core/util/outputfile.h): a fresh temporary
/// file, flushed, then moved in place, so a reader (or a crash) sees the previous complete version or the new
/// one. ReplaceMode::Allowed: the rank folder was claimed fresh by this run (dumpfolder.h), and dump.json,
/// stack.json and construct.json are rewritten at every stop() and step(); a symlink at the name is replaced
/// itself, never followed.
std::optional<std::string> writeText(const std::string& path, const std::string& text)
{
    if (auto failure = probescope::writeFileAtomically(path, text, probescope::ReplaceMode::Allowed))
        return path + ": error [collect.io]: " + failure->message;
    return std::nullopt;
}

/// Makes `path` a new file with the content of `source` (a file this run wrote): a hard link, else a copy.
/// A name this run wrote before (a parameter's gradient under gradient accumulation) is unlinked first, never
/// truncated, so other links to it keep their content; the copy is created O_EXCL, never through a symlink.
std::optional<std::string> copyOrLink(const std::string& source, const std::string& path)
{
    if (::link(source.c_str(), path.c_str()) == 0)
        return std::nullopt;
    if (errno == EEXIST && ::unlink(path.c_str()) == 0 && ::link(source.c_str(), path.c_str()) == 0)
        return std::nullopt;
    auto in = probescope::openRegularFile(source);
    if (!in)
        return path + ": error [collect.io]: cannot copy " + source + ": " + in.error().message;
    const int from = *in;
    const int to = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (to < 0) {
        const int err = errno;
        ::close(from);
        return path + ": error [collect.io]: " + probescope::errnoText("cannot create", path, err);
    }
    std::string buffer(1 << 20, '\0');
    std::optional<std::string> problem;
    for (;;) {
        const ssize_t n = ::read(from, buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            problem = probescope::errnoText("cannot read", source, errno);
            break;
        }
        if (n == 0)
            break;
        int err = 0;
        if (!probescope::writeOutputFd(to, std::string_view(buffer.data(), static_cast<std::size_t>(n)), err)) {
            problem = probescope::errnoText("cannot write", path, err);
            break;
        }
    }
    ::close(from);
    if (::close(to) != 0 && !problem)
        problem = probescope::errnoText("cannot close", path, errno);
    if (!problem)
        return std::nullopt;
    ::unlink(path.c_str()); // no cut copy under the name
    return path + ": error [collect.io]: " + *problem;
}

/// The files written in one tensor folder, by tensor: a tensor seen again unchanged (same TensorImpl, same
/// version counter: an in-place change bumps it) gets a link to its first file. The weak reference keeps a
/// freed TensorImpl's memory from being reused by another tensor while the entry lives (one step).
struct WrittenTensors
{
    struct Seen
    {
        c10::weak_intrusive_ptr<c10::TensorImpl> impl;
        std::uint32_t version;
        std::string file;
    };
    std::string folder;
    std::unordered_map<const c10::TensorImpl*, Seen> files;

    /// The file of `t` written before in `dir`, or "" (and `t` is remembered as written to `file`).
    std::string previous(const at::Tensor& t, const std::string& dir, const std::string& file)
    {
        if (dir != folder) {
            files.clear();
            folder = dir;
        }
        const std::uint32_t version = t._version();
        const c10::TensorImpl* key = t.unsafeGetTensorImpl();
        auto it = files.find(key);
        if (it != files.end()) {
            auto alive = it->second.impl.lock();
            if (alive.get() == key && it->second.version == version)
                return it->second.file;
            files.erase(it);
        }
        files.emplace(key, Seen { c10::weak_intrusive_ptr<c10::TensorImpl>(t.getIntrusivePtr()), version, file });
        return {};
    }
};

WrittenTensors gWritten; // used with the GIL held (describe() runs in Python's threads)

/// The dump's files, written while the model computes by the collection library's background writer
/// (core/collect/backgroundwriter.h, the one the C++ API uses), in the order they were queued: tensor mode's
/// .pt files (the Python thread hands over a private copy, since the model may change a tensor in place later,
/// as the optimizer does to parameters) and the JSON files stop() and step() snapshot. Because one thread
/// writes them in order, a dump.json is written only after every .pt file it names, and stop() need not wait.
/// At most `limit` bytes wait; beyond that the producer waits for the disk, so memory stays bounded when the
/// disk is slower than the model. flush() waits for everything (at exit, before compare()). A write error is
/// raised by the next call that queues or flushes; the jobs queued after the failed one are not written (no
/// hole in the middle of a dump). The bound: config.json's "async_queue_bytes" (set_write_queue_bytes), else
/// PROBESCOPE_WRITE_QUEUE_MB, else the library's defaultAsyncQueueBytes(); 0 writes every file at once.
class PtQueue
{
public:
    static PtQueue& instance()
    {
        static PtQueue* queue = new PtQueue(); // never destroyed: its thread may outlive static destructors
        return *queue;
    }

    std::uint64_t limit() const
    {
        const std::lock_guard lock(m_mutex);
        return m_limit;
    }

    /// A new bound (config.json's async_queue_bytes): what is queued is written first. Callable without the
    /// GIL: m_mutex, not the GIL, guards the writer (a Python thread may queue meanwhile; it waits here).
    void setLimit(std::uint64_t bytes)
    {
        const std::lock_guard lock(m_mutex);
        if (bytes == m_limit)
            return;
        if (auto error = flushLocked())
            throw std::runtime_error(*error);
        m_writer.reset();
        m_limit = bytes;
    }

    void push(at::Tensor tensor, std::string path, std::string text = {}, std::string linkTo = {})
    {
        const std::lock_guard lock(m_mutex);
        if (!m_writer)
            m_writer = std::make_unique<probescope::collect::BackgroundWriter>(m_limit);
        if (m_writer->failed()) {
            const std::optional<std::string> error = flushLocked();
            if (error)
                throw std::runtime_error(*error);
        }
        const std::uint64_t bytes = tensor.defined() ? tensor.nbytes() : text.size();
        m_writer->push(bytes, [tensor = std::move(tensor), path = std::move(path), text = std::move(text),
                               linkTo = std::move(linkTo)]() mutable -> std::optional<probescope::Diagnostic> {
            std::optional<std::string> problem;
            if (tensor.defined()) {
                if (auto d = leaf::savePt(tensor, path))
                    problem = d->format();
            } else if (!linkTo.empty()) {
                problem = copyOrLink(linkTo, path);
            } else {
                problem = writeText(path, text);
            }
            if (!problem)
                return std::nullopt;
            return probescope::makeError("collect.io", {}, *problem);
        });
    }

    /// Waits for every queued file; returns the first error met since the last flush.
    std::optional<std::string> flush()
    {
        const std::lock_guard lock(m_mutex);
        return flushLocked();
    }

private:
    std::optional<std::string> flushLocked()
    {
        if (!m_writer)
            return std::nullopt;
        m_writer->drain();
        std::optional<probescope::Diagnostic> failure = m_writer->takeFailure();
        m_writer->clearFailure();
        if (!failure)
            return std::nullopt;
        return failure->message; // the job's text already names the file and says [collect.io]
    }

    PtQueue()
    {
        const char* mb = std::getenv("PROBESCOPE_WRITE_QUEUE_MB");
        m_limit = mb && *mb ? std::strtoull(mb, nullptr, 10) << 20 : probescope::collect::defaultAsyncQueueBytes();
    }

    mutable std::mutex m_mutex; ///< guards the two below: flush() and setLimit() run without the GIL
    std::uint64_t m_limit = 0;
    std::unique_ptr<probescope::collect::BackgroundWriter> m_writer; ///< made at the first file
};

/// Task overflow_check (docs/collect.md): an entry's .pt files are kept aside until the entry is known to
/// overflow (an inf or NaN element in any of its tensors), as the C++ API's LeafWriter keeps them; then they are
/// written, or dropped with the entry. Between begin_entry() and end_entry(); used with the GIL held.
struct OverflowEntry
{
    bool active = false;
    bool overflow = false;
    std::vector<std::pair<at::Tensor, std::string>> files; ///< private copies and their paths
};

OverflowEntry gEntry;

/// One part of one entry: where its tensors go and how they are summarised.
struct Part
{
    std::string prefix;    ///< data_name stem: "Functional.linear.0.forward.input"
    std::string tensorDir; ///< "" = no .pt files (statistics task)
    bool md5 = false;
};

std::string join(const std::string& path, const std::string& item)
{
    return path.empty() ? item : path + "." + item;
}

/// The leaf of a tensor (leafstats.h: the same statistics and layout as the C++ API's leaves), and its .pt file.
void describeTensor(PyJsonWriter& json, const at::Tensor& t, const Part& part, const std::string& path)
{
    const at::Tensor c = t.is_meta() ? at::Tensor() : leaf::readable(t.detach());
    const leaf::Stats s = c.defined() ? leaf::stats(c, t.detach()) : leaf::Stats {};
    gEntry.overflow = gEntry.overflow || s.overflow;
    const std::string md5Text = part.md5 && c.defined() ? leaf::md5(c) : std::string();
    std::string name;
    if (!part.tensorDir.empty() && c.defined() && leaf::savable(c)) {
        // data_name only for a file that is written (as the C++ API's leaves)
        name = (path.empty() ? part.prefix : part.prefix + "." + path) + ".pt";
        const std::string file = (std::filesystem::path(part.tensorDir) / name).string();
        if (gEntry.active) {
            // written by end_entry() if the entry overflows, else dropped with it
            gEntry.files.emplace_back(c.is_alias_of(t) ? c.clone() : c, file);
        } else {
            PtQueue& queue = PtQueue::instance();
            if (const std::string earlier = gWritten.previous(t, part.tensorDir, file); !earlier.empty()) {
                if (queue.limit() > 0)
                    queue.push(at::Tensor(), file, {}, earlier); // after the earlier file: the queue keeps order
                else if (auto problem = copyOrLink(earlier, file))
                    throw std::runtime_error(*problem);
            } else if (queue.limit() > 0) {
                // `c` may share the caller's storage: the queue gets its own copy (msprobe clones too).
                queue.push(c.is_alias_of(t) ? c.clone() : c, file);
            } else if (auto problem = leaf::savePt(c, file)) {
                throw std::runtime_error(problem->format());
            }
        }
    }
    leaf::writeTensorLeaf(json, t, s, name.empty() ? nullptr : &name, md5Text.empty() ? nullptr : &md5Text);
}

/// Python's text of a str, as json.dump(ensure_ascii) escapes it (a lone surrogate becomes U+FFFD).
std::string utf8(py::handle s)
{
    Py_ssize_t size = 0;
    if (const char* data = PyUnicode_AsUTF8AndSize(s.ptr(), &size))
        return std::string(data, static_cast<std::size_t>(size));
    PyErr_Clear();
    py::object bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(s.ptr(), "utf-8", "replace"));
    return bytes ? std::string(PyBytes_AsString(bytes.ptr()), static_cast<std::size_t>(PyBytes_Size(bytes.ptr())))
                 : std::string();
}

/// An int as json.dump writes it (int.__repr__, also for subclasses such as IntEnum), past int64 too.
void writeInt(PyJsonWriter& json, std::string& text, py::handle v)
{
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow == 0) {
        json.integer(n);
        return;
    }
    // PyJsonWriter has no raw value: its "0" is replaced by the digits.
    json.integer(0);
    text.pop_back();
    text += py::str(py::reinterpret_steal<py::object>(PyNumber_Long(v.ptr()))).cast<std::string>();
}

/// A Python value as json.dump writes it: None, bool, int, float, str (subclasses by their base's rule). Others
/// (json.dump would refuse them at stop()) are null.
void writePlain(PyJsonWriter& json, std::string& text, py::handle v)
{
    if (v.is_none())
        json.null();
    else if (PyBool_Check(v.ptr()))
        json.boolean(v.ptr() == Py_True);
    else if (PyLong_Check(v.ptr()))
        writeInt(json, text, v);
    else if (PyFloat_Check(v.ptr()))
        json.number(PyFloat_AsDouble(v.ptr()));
    else if (PyUnicode_Check(v.ptr()))
        json.string(utf8(v));
    else
        json.null();
}

/// A dict key as json.dump converts it: str as is, float by repr, True/False/None as true/false/null, int by
/// int.__repr__; other keys (which json.dump refuses) by str().
std::string keyText(py::handle k)
{
    if (PyUnicode_Check(k.ptr()))
        return utf8(k);
    if (PyBool_Check(k.ptr()))
        return k.ptr() == Py_True ? "true" : "false";
    if (k.is_none())
        return "null";
    if (PyFloat_Check(k.ptr())) {
        std::string out;
        probescope::dump::appendPyFloat(out, PyFloat_AsDouble(k.ptr()));
        return out;
    }
    if (PyLong_Check(k.ptr()))
        return py::str(py::reinterpret_steal<py::object>(PyNumber_Long(k.ptr()))).cast<std::string>();
    return utf8(py::str(k));
}

/// msprobe's leaf of a Python built-in value: {"type": ..., "value": ...}.
void describeBuiltin(PyJsonWriter& json, std::string& text, py::handle v)
{
    json.beginObject();
    json.key("type");
    if (PySlice_Check(v.ptr())) {
        json.string("slice");
        json.key("value");
        json.beginArray();
        for (const char* attr : { "start", "stop", "step" }) {
            py::object x = v.attr(attr);
            if (x.is_none())
                json.null();
            else
                writeInt(json, text, py::int_(x));
        }
        json.endArray();
    } else if (v.ptr() == Py_Ellipsis) {
        json.string("ellipsis");
        json.key("value");
        json.string("...");
    } else {
        json.string(Py_TYPE(v.ptr())->tp_name);
        json.key("value");
        writePlain(json, text, v);
    }
    json.endObject();
}

/// Writes msprobe's leaves of a Python value (an entry part: args, kwargs, output, parameters) as JSON text.
struct Walker
{
    const Part& part;
    PyJsonWriter& json;
    std::string& text;
    py::handle torchSize, memoryFormat, torchDevice, torchDtype, numpyGeneric;

    void typed(const char* type, const std::string& value)
    {
        json.beginObject();
        json.key("type");
        json.string(type);
        json.key("value");
        json.string(value);
        json.endObject();
    }

    void value(py::handle v, const std::string& path, const std::string& lastKey)
    {
        if (v.is_none()) {
            json.null();
        } else if (THPVariable_Check(v.ptr())) {
            describeTensor(json, THPVariable_Unpack(v.ptr()), part, path);
        } else if (lastKey == "device") {
            json.beginObject();
            json.key("type");
            json.string("torch.device");
            json.key("value");
            if (py::isinstance<py::str>(v))
                writePlain(json, text, v);
            else if (py::hasattr(v, "index"))
                json.string(utf8(py::str(v.attr("type")) + py::str(":") + py::str(v.attr("index"))));
            else
                writePlain(json, text, v.attr("type"));
            json.endObject();
        } else if (lastKey == "dtype") {
            typed("torch.dtype", utf8(py::str(v)));
        } else if (py::isinstance(v, torchSize)) {
            json.beginObject();
            json.key("type");
            json.string("torch.Size");
            json.key("value");
            json.beginArray();
            for (py::handle d : v)
                writePlain(json, text, d);
            json.endArray();
            json.endObject();
        } else if (PyBool_Check(v.ptr()) || PyLong_CheckExact(v.ptr()) || PyFloat_CheckExact(v.ptr())
                   || PyUnicode_CheckExact(v.ptr()) || PySlice_Check(v.ptr()) || v.ptr() == Py_Ellipsis) {
            describeBuiltin(json, text, v);
        } else if (numpyGeneric && py::isinstance(v, numpyGeneric)) {
            json.beginObject();
            json.key("type");
            const std::string name = Py_TYPE(v.ptr())->tp_name;
            json.string(name.substr(name.rfind('.') + 1));
            json.key("value");
            writePlain(json, text, v.attr("item")());
            json.endObject();
        } else if (PyTuple_Check(v.ptr()) && py::hasattr(v, "_fields")) {
            json.beginObject();
            for (py::handle field : v.attr("_fields")) {
                const std::string k = utf8(py::str(field));
                json.key(k);
                value(v.attr(field), join(path, k), k);
            }
            json.endObject();
        } else if (PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) {
            json.beginArray();
            std::size_t i = 0;
            for (py::handle item : v) {
                const std::string k = std::to_string(i++);
                value(item, join(path, k), k);
            }
            json.endArray();
        } else if (PyDict_Check(v.ptr())) {
            json.beginObject();
            for (auto item : py::reinterpret_borrow<py::dict>(v)) {
                const std::string k = utf8(py::str(item.first));
                json.key(keyText(item.first));
                value(item.second, join(path, k), k);
            }
            json.endObject();
        } else if (py::isinstance(v, memoryFormat)) {
            json.beginObject();
            json.key("type");
            json.string("torch.memory_format");
            json.key("format");
            const std::string s = utf8(py::str(v));
            json.string(s.starts_with("torch.") ? s.substr(6) : s);
            json.endObject();
        } else if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())
                   || PyUnicode_Check(v.ptr())) {
            describeBuiltin(json, text, v); // subclasses (IntEnum, ...): msprobe's isinstance tests take them too
        } else if (py::isinstance(v, torchDevice) || py::isinstance(v, torchDtype)) {
            json.beginObject(); // msprobe: a torch type it knows but has no leaf for
            json.endObject();
        } else {
            json.null();
        }
    }
};

/// describe_text(): the JSON text of `value`'s leaves, laid out at `depth` (3: an entry part of dump.json), inside
/// a one-element list when `inList` (parameters_grad's [leaf]).
std::string describeText(py::handle value, const std::string& prefix, const std::string& tensorDir, bool md5,
                         unsigned depth, bool inList)
{
    Part part { prefix, tensorDir, md5 };
    static py::object* handles = [] {
        py::module_ torchModule = py::module_::import("torch");
        py::object np = py::module_::import("probescope._C").attr("_numpy_generic");
        auto* h = new py::object[5] { torchModule.attr("Size"), torchModule.attr("memory_format"),
                                      torchModule.attr("device"), torchModule.attr("dtype"), np };
        return h;
    }();
    std::string text;
    PyJsonWriter json(text, depth);
    Walker walker { part, json, text, handles[0], handles[1], handles[2], handles[3],
                    handles[4].is_none() ? py::handle() : py::handle(handles[4]) };
    if (inList)
        json.beginArray();
    walker.value(value, "", "");
    if (inList)
        json.endArray();
    return text;
}

/// PrecisionDebugger's step= argument as the C++ parser takes it: integers and "first-last" texts (checked
/// there, by config.json's rules); anything else is refused here, naming the argument.
std::vector<std::variant<std::int64_t, std::string>> stepItems(const py::handle& step)
{
    const auto refuse = [] {
        return py::value_error("PrecisionDebugger(step=...): error [collect.config]: \"step\" must be a list of "
                               "integers or \"first-last\" ranges, e.g. [0, \"2-4\"]");
    };
    if (!PyList_Check(step.ptr()))
        throw refuse();
    std::vector<std::variant<std::int64_t, std::string>> items;
    for (py::handle item : step) {
        if (PyBool_Check(item.ptr()))
            throw refuse();
        if (PyLong_Check(item.ptr())) {
            int overflow = 0;
            const long long n = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
            // Past int64: a number the parser refuses as out of range, as it refuses 10**7.
            items.emplace_back(overflow != 0 ? std::int64_t(-1) : static_cast<std::int64_t>(n));
        } else if (PyUnicode_Check(item.ptr())) {
            items.emplace_back(item.cast<std::string>());
        } else {
            throw refuse();
        }
    }
    return items;
}

/// config.json as the C++ API reads it (core/collect/config.cpp: one parser, errors naming file:line:col and
/// the key; the file opened through core/util/fileio.h, so a FIFO or a folder is refused, never waited on), with
/// PrecisionDebugger's arguments applied by the same code before the task's section is chosen (msprobe reads the
/// section of the task the arguments name), handed to Python as a dict. `path` None: msprobe's defaults.
/// `task` and `level` are names the library knows (Python refuses the others with its own message first).
py::dict loadConfigDict(const py::object& path, const py::object& task, const py::object& dumpPath,
                        const py::object& level, const py::object& step)
{
    using namespace probescope::collect;
    Config c;
    ConfigOverrides overrides;
    if (!task.is_none()) {
        overrides.task = parseTask(task.cast<std::string>());
        if (!overrides.task)
            throw py::value_error("PrecisionDebugger(): error [collect.config]: unknown task \""
                                  + task.cast<std::string>() + "\"");
    }
    if (!level.is_none()) {
        overrides.level = parseLevel(level.cast<std::string>());
        if (!overrides.level)
            throw py::value_error("PrecisionDebugger(): error [collect.config]: unknown level \""
                                  + level.cast<std::string>() + "\"");
    }
    if (!dumpPath.is_none())
        overrides.dumpPath = dumpPath.cast<std::string>();
    if (!step.is_none())
        overrides.step = stepItems(step);
    std::string file;
    if (!path.is_none()) {
        if (!py::isinstance<py::str>(path))
            throw py::value_error("PrecisionDebugger(): error [collect.config]: config_path must be a string");
        file = path.cast<std::string>();
        if (file.empty())
            throw py::value_error("PrecisionDebugger(): error [collect.config]: config_path must not be empty");
    }
    try {
        py::gil_scoped_release unlocked; // reading a file on a slow mount need not stop other threads
        c = loadConfig(file, overrides);
    } catch (const CollectError& e) {
        throw py::value_error(e.what());
    }
    const auto ranges = [](const std::vector<std::pair<std::int64_t, std::int64_t>>& rs) {
        py::list out;
        for (const auto& [first, last] : rs)
            out.append(py::make_tuple(first, last));
        return out;
    };
    py::dict d;
    d["task"] = toString(c.task);
    d["level"] = toString(c.level);
    d["dump_path"] = c.dumpPath;
    d["rank"] = py::cast(c.ranks);
    d["rank_ranges"] = ranges(c.rankRanges);
    d["step"] = py::cast(c.steps);
    d["step_ranges"] = ranges(c.stepRanges);
    d["seed"] = c.seed;
    d["is_deterministic"] = c.isDeterministic;
    d["seed_configured"] = c.seedConfigured;
    d["scope"] = py::cast(c.scope);
    d["list"] = py::cast(c.list);
    d["data_mode"] = py::cast(c.dataMode);
    d["summary_mode"] = c.summaryMode == SummaryMode::Md5 ? "md5" : "statistics";
    d["overflow_nums"] = c.overflowNums;
    d["async_queue_bytes"] = c.asyncQueueBytes ? py::object(py::int_(*c.asyncQueueBytes)) : py::object(py::none());
    py::dict fb;
    fb["fuzz_device"] = c.freeBenchmark.fuzzDeviceCpu ? "cpu" : "npu";
    fb["pert_mode"] = toString(c.freeBenchmark.pertMode);
    fb["handler_type"] = c.freeBenchmark.fix ? "fix" : "check";
    fb["fuzz_stage"] = c.freeBenchmark.backward ? "backward" : "forward";
    fb["if_preheat"] = c.freeBenchmark.ifPreheat;
    fb["preheat_step"] = c.freeBenchmark.preheatStep;
    fb["max_sample"] = c.freeBenchmark.maxSample;
    d["free_benchmark"] = fb;
    return d;
}

/// Python's half of claimRankFolder (dumpfolder.h): a ValueError naming the folder when it is refused.
void claimFolder(const std::string& dumpPath, const std::string& step, const std::string& rank, bool tensors)
{
    if (auto problem = probescope::collect::claimRankFolder(dumpPath, step, rank, tensors))
        throw py::value_error(problem->format());
}

} // namespace

PYBIND11_MODULE(_C, m)
{
    m.doc() = "ProbeScope's collector: msprobe's JSON leaves, statistics, md5 and .pt files in C++";
    probescope::collect::registerConfigCheck(m); // probescope.ConfigChecker (configcheckbind.cpp)
    py::module_ torch = py::module_::import("torch");
    py::object numpyGeneric = py::none();
    try {
        numpyGeneric = py::module_::import("numpy").attr("generic");
    } catch (const py::error_already_set&) {
    }
    m.attr("_numpy_generic") = numpyGeneric;
    m.def(
        "describe_text", &describeText, py::arg("value"), py::arg("prefix"), py::arg("tensor_dir") = "",
        py::arg("md5") = false, py::arg("depth") = 3, py::arg("in_list") = false,
        "msprobe's leaves of `value` (a tensor or a structure) as JSON text laid out at `depth` (3: an entry part of "
        "dump.json); tensors named prefix.<path>.pt go to tensor_dir when it is given (through the background "
        "queue: see flush()).");
    m.def(
        "describe",
        [](py::handle value, const std::string& prefix, const std::string& tensorDir, bool md5) {
            return py::module_::import("json").attr("loads")(describeText(value, prefix, tensorDir, md5, 0, false));
        },
        py::arg("value"), py::arg("prefix"), py::arg("tensor_dir") = "", py::arg("md5") = false,
        "describe_text() read back by json.loads: msprobe's leaves of `value` as Python values.");
    m.def(
        "flush",
        [] {
            std::optional<std::string> error;
            {
                py::gil_scoped_release unlocked; // the writer thread never takes the GIL, but the wait is long
                error = PtQueue::instance().flush();
            }
            if (error)
                throw std::runtime_error(*error);
        },
        "Waits until every queued .pt file is written; raises the first write error since the last flush.");
    m.def(
        "write_text",
        [](const std::string& path, std::string text) {
            PtQueue& queue = PtQueue::instance();
            if (queue.limit() > 0) {
                queue.push(at::Tensor(), path, std::move(text));
            } else if (auto problem = writeText(path, text)) {
                throw std::runtime_error(*problem);
            }
        },
        py::arg("path"), py::arg("text"),
        "Writes a whole file (temporary file, rename) after everything queued before it.");
    m.def(
        "begin_entry", [] { gEntry = OverflowEntry { true, false, {} }; },
        "overflow_check: the .pt files of the describe() calls that follow wait for end_entry().");
    m.def(
        "entry_overflow", [] { return gEntry.overflow; },
        "Whether a tensor described since begin_entry() has an inf or NaN element.");
    m.def(
        "end_entry",
        [](bool write) {
            OverflowEntry entry = std::move(gEntry);
            gEntry = OverflowEntry {};
            if (!write)
                return;
            PtQueue& queue = PtQueue::instance();
            for (auto& [tensor, file] : entry.files) {
                if (queue.limit() > 0)
                    queue.push(std::move(tensor), file);
                else if (auto problem = leaf::savePt(tensor, file))
                    throw std::runtime_error(problem->format());
            }
        },
        py::arg("write"), "Writes (write=True) or drops the .pt files kept since begin_entry().");
    m.def("load_config", &loadConfigDict, py::arg("path"), py::arg("task") = py::none(),
          py::arg("dump_path") = py::none(), py::arg("level") = py::none(), py::arg("step") = py::none(),
          "config.json read and checked by the C++ API's parser, with PrecisionDebugger's arguments over it (a "
          "dict); raises ValueError naming the file, line, column and key.");
    m.def("claim_rank_folder", &claimFolder, py::arg("dump_path"), py::arg("step"), py::arg("rank"),
          py::arg("tensors"),
          "Creates dump_path/step/rank (and dump_tensor_data) for a new run: the rank folder must not exist and "
          "nothing below dump_path may be a symlink (ValueError naming the folder).");
    m.def("write_queue_limit", [] { return PtQueue::instance().limit(); },
          "Bytes of tensors that may wait for the disk (async_queue_bytes, PROBESCOPE_WRITE_QUEUE_MB, or the "
          "library's default: 1 GiB, at most 1/8 of physical memory; 0 = no thread).");
    defineFreeBenchmark(m); // task free_benchmark: the C++ library's engine (freebenchpy.cpp)
    // msprobe's scope and list filters (core/collect/msprobescope.h): the module's bookkeeping in C++.
    using probescope::collect::MsprobeScope;
    py::class_<MsprobeScope>(m, "Scope")
        .def(py::init([](const std::string& where, const std::string& level, std::vector<std::string> scope,
                         std::vector<std::string> list) {
                 const auto parsed = probescope::collect::parseLevel(level);
                 if (!parsed)
                     throw py::value_error(where + ": error [collect.config]: unknown level \"" + level + "\"");
                 try {
                     return std::make_unique<MsprobeScope>(where, *parsed, std::move(scope), std::move(list));
                 } catch (const probescope::collect::CollectError& e) {
                     throw py::value_error(e.what());
                 }
             }),
             py::arg("where"), py::arg("level"), py::arg("scope"), py::arg("list"))
        .def("check", &MsprobeScope::check, py::arg("name"), "Whether the entry `name` is written.")
        .def("begin_module", &MsprobeScope::beginModule, py::arg("name"))
        .def("end_module", &MsprobeScope::endModule, py::arg("name"));
    // The collector core's bookkeeping in msprobe's Python-dumper mode (core/collect/msprobebook.h): counters,
    // construct.json parents, stack.json frames, the entries and the three files' text.
    using probescope::collect::MsprobeBook;
    py::class_<MsprobeBook>(m, "Book")
        .def(py::init<bool>(), py::arg("construct"))
        .def("reset", &MsprobeBook::reset)
        .def("count_api", &MsprobeBook::countApi, py::arg("stem"))
        .def("count_module", &MsprobeBook::countModule, py::arg("key"))
        .def("count_debug", &MsprobeBook::countDebug, py::arg("name"))
        .def("begin_module", &MsprobeBook::beginModule, py::arg("name"))
        .def("end_module", &MsprobeBook::endModule)
        .def("begin_module_backward", &MsprobeBook::beginModuleBackward, py::arg("name"))
        .def("update_construct", &MsprobeBook::updateConstruct, py::arg("name"))
        .def(
            "put",
            [](MsprobeBook& book, const std::string& name, const py::dict& parts) {
                std::vector<std::pair<std::string, std::string>> items;
                items.reserve(parts.size());
                for (auto item : parts)
                    items.emplace_back(item.first.cast<std::string>(), item.second.cast<std::string>());
                book.put(name, items);
            },
            py::arg("name"), py::arg("parts"), "dict.update of the entry with {part: JSON text at depth 3}.")
        .def("admit_overflow", &MsprobeBook::admitOverflow, py::arg("overflow"), py::arg("overflow_nums"))
        .def_property_readonly("overflow_count", &MsprobeBook::overflowCount)
        .def("put_value", &MsprobeBook::putValue, py::arg("name"), py::arg("text"))
        .def("drop", &MsprobeBook::drop, py::arg("name"))
        .def("has", &MsprobeBook::has, py::arg("name"))
        .def("set_stack", &MsprobeBook::setStack, py::arg("name"), py::arg("frames"))
        .def("dump_text", &MsprobeBook::dumpText, py::arg("task"), py::arg("level"), py::arg("dump_data_dir"))
        .def("construct_text", &MsprobeBook::constructText)
        .def("stack_text", &MsprobeBook::stackText)
        .def(
            "write_files",
            [](const MsprobeBook& book, const std::string& rankDir, const std::string& task, const std::string& level,
               const std::optional<std::string>& dumpDataDir, bool debug) {
                // Snapshotted now, written whole (temporary file, rename) by the background writer after every .pt
                // file queued before them: stop() does not wait for the disk, and a dump.json never names a
                // missing file.
                const std::filesystem::path dir(rankDir);
                std::vector<std::pair<std::string, std::string>> files;
                if (debug) {
                    files.emplace_back((dir / "debug.json").string(), book.dumpText(task, "debug", dumpDataDir));
                } else {
                    files.emplace_back((dir / "dump.json").string(), book.dumpText(task, level, dumpDataDir));
                    files.emplace_back((dir / "stack.json").string(), book.stackText());
                    files.emplace_back((dir / "construct.json").string(), book.constructText());
                }
                PtQueue& queue = PtQueue::instance();
                for (auto& [path, text] : files) {
                    if (queue.limit() > 0)
                        queue.push(at::Tensor(), path, std::move(text));
                    else if (auto problem = writeText(path, text))
                        throw std::runtime_error(*problem);
                }
            },
            py::arg("rank_dir"), py::arg("task"), py::arg("level"), py::arg("dump_data_dir"), py::arg("debug") = false,
            "Queues dump.json, stack.json and construct.json (debug: debug.json) of this step, as they are now.");
    m.def(
        "set_write_queue_bytes",
        [](const py::object& value) {
            // A clear error for what pybind would refuse with a bare TypeError (1e30, -1, "1G", True).
            if (PyBool_Check(value.ptr()) || !PyLong_Check(value.ptr()) || value < py::int_(0)
                || value > py::int_(std::numeric_limits<std::uint64_t>::max()))
                throw py::value_error("set_write_queue_bytes: error [collect.config]: \"async_queue_bytes\" must be "
                                      "an integer from 0 to 2**64-1 (bytes of tensors that may wait for the disk)");
            const auto bytes = value.cast<std::uint64_t>();
            py::gil_scoped_release unlocked; // what is queued is written first; PtQueue's mutex guards the writer
            PtQueue::instance().setLimit(bytes);
        },
        py::arg("bytes"), "config.json's async_queue_bytes: the bound on bytes waiting for the disk (0 = no thread).");
}
