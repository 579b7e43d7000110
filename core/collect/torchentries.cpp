// SPDX-License-Identifier: Apache-2.0
// The C++ API's entries (torchdebugger.h): an entry's JSON from the values a hook saw (LeafWriter, the tensor
// leaves through leafstats.h), its .pt files, and its hand-over to the background writer or the files. Built with
// NDEBUG like torchcollect.cpp.
#include "torchdebugger.h"

#include <cstdio>
#include <tuple>

namespace probescope::collect {

namespace entries {

using dump::PyJsonWriter;
using torch::autograd::variable_list;

namespace {

/// A contiguous CPU copy of `t` that the model cannot change afterwards (undefined when there are no
/// values to read). What the background writer computes statistics from, writes, and counts.
at::Tensor snapshot(const at::Tensor& t)
{
    if (!t.defined() || t.is_sparse() || t.is_meta() || t.is_quantized() || t.is_mkldnn())
        return {};
    const at::Tensor d = t.detach(); // no autograd node for our copy
    return d.is_cpu() ? d.clone(at::MemoryFormat::Contiguous) : d.cpu().contiguous();
}


/// Writes the files of an entry kept by overflow_check.
void writePending(PrecisionDebugger::Impl& impl, const std::vector<PendingFile>& files)
{
    for (const PendingFile& f : files)
        impl.report(leaf::savePt(f.tensor, impl.session.tensorDir() / f.dataName));
}

/// The background writer's job for one entry: statistics and md5 from the snapshots into the
/// placeholders, the .pt files, then the entry, which so names only complete files.
std::optional<Diagnostic> writeInBackground(dump::DumpWriter& writer, const Session& session, const EntryPlan& plan,
                                            const std::string& text, const std::vector<LeafSnapshot>& leaves,
                                            const std::filesystem::path& tensorDir, bool forward)
{
    at::DisableRecordFunctionGuard notUserOps; // our own aten calls (bfloat16 widening) are no user's
    std::string out;
    out.reserve(text.size() + 32 * leaves.size());
    std::size_t from = 0;
    const auto upTo = [&](std::size_t at, std::size_t placeholder) {
        out.append(text, from, at - from);
        from = at + placeholder;
    };
    for (const LeafSnapshot& snap : leaves) {
        if (!snap.dataName.empty()) {
            if (auto problem = leaf::savePt(snap.tensor, tensorDir / snap.dataName))
                return problem;
        }
        const leaf::Stats& s = snap.summary;
        for (std::size_t i = 0; i < 4; ++i) {
            upTo(snap.statsAt[i], 4); // "null"
            leaf::appendStatistic(out, s, static_cast<int>(i));
        }
        upTo(snap.exceptAt, 0);
        for (const auto& [key, value] : { std::pair { "Max_except_inf_nan", s.maxExceptInfNan },
                                          std::pair { "Min_except_inf_nan", s.minExceptInfNan } }) {
            if (!value)
                continue;
            out += ",\n";
            out.append(snap.indent, ' ');
            out += '"';
            out += key;
            out += "\": ";
            dump::appendPyFloat(out, *value);
        }
        if (snap.md5At != std::string::npos) {
            upTo(snap.md5At, 2); // "\"\""
            out += '"';
            out += leaf::md5(snap.tensor);
            out += '"';
        }
    }
    out.append(text, from);
    return session.publish(writer, plan, out, forward);
}

} // namespace

void LeafWriter::value(const c10::IValue& v, const std::string& path)
{
    if (v.isTensor()) {
        tensor(v.toTensor(), path);
    } else if (v.isNone()) {
        m_json.null();
    } else if (v.isBool() || v.isInt() || v.isDouble() || v.isString() || v.isDevice()) {
        scalar(v);
    } else if (v.isList()) {
        m_json.beginArray();
        const c10::List<c10::IValue> list = v.toList();
        for (std::size_t i = 0; i < list.size(); ++i)
            value(list.get(i), join(path, std::to_string(i)));
        m_json.endArray();
    } else if (v.isTuple()) {
        m_json.beginArray();
        const auto& elements = v.toTupleRef().elements();
        for (std::size_t i = 0; i < elements.size(); ++i)
            value(elements[i], join(path, std::to_string(i)));
        m_json.endArray();
    } else if (v.isGenericDict()) {
        m_json.beginObject();
        for (const auto& item : v.toGenericDict()) {
            const std::string k = item.key().isString() ? item.key().toStringRef() : std::string("?");
            m_json.key(k);
            value(item.value(), join(path, k));
        }
        m_json.endObject();
    } else {
        m_json.null(); // generators, storages, objects: nothing msprobe's readers could use
    }
}

void LeafWriter::tensor(const at::Tensor& t, const std::string& path)
{
    if (!t.defined()) {
        m_json.null();
        return;
    }
    if (m_background) {
        backgroundTensor(t, path);
        return;
    }
    const at::Tensor c = leaf::readable(t);
    const leaf::Stats s = c.defined() ? leaf::stats(c, t.detach()) : leaf::Stats {};
    overflow = overflow || s.overflow;
    std::string name;
    if (m_plan.saveTensors && c.defined() && leaf::savable(c)) {
        name = Session::dataName(m_plan.key, path);
        if (m_defer)
            pending.push_back({ cloneDeferred ? c.clone() : c, name });
        else
            m_impl.report(leaf::savePt(c, m_impl.session.tensorDir() / name));
    }
    const std::string md5Text = m_md5 && c.defined() ? leaf::md5(c) : std::string();
    leaf::writeTensorLeaf(m_json, t, s, name.empty() ? nullptr : &name, md5Text.empty() ? nullptr : &md5Text);
}

/// msprobe's leaf of a Python scalar: {"type": "int", "value": 3}.
void LeafWriter::scalar(const c10::IValue& v)
{
    m_json.beginObject();
    m_json.key("type");
    m_json.string(v.isBool() ? "bool" : v.isInt() ? "int" : v.isDouble() ? "float" : v.isString() ? "str" : "torch.device");
    m_json.key("value");
    if (v.isBool())
        m_json.boolean(v.toBool());
    else if (v.isInt())
        m_json.integer(v.toInt());
    else if (v.isDouble())
        m_json.number(v.toDouble());
    else if (v.isString())
        m_json.string(v.toStringRef());
    else
        m_json.string(v.toDevice().str());
    m_json.endObject();
}

/// tensor() for the background writer: a copy the model cannot change is queued, and the statistics
/// (and md5) stand as placeholders ("null", "\"\"") that the writer replaces once it has them.
void LeafWriter::backgroundTensor(const at::Tensor& t, const std::string& path)
{
    LeafSnapshot snap;
    snap.tensor = snapshot(t);
    // The statistics are torch's reductions (msprobe's, bit for bit): computed here, in the training thread,
    // over the tensor as the model has it, as the training-thread writer and msprobe compute them. In the
    // writer thread they would run in ATen's thread pool from a second thread, which hangs in a forked
    // child whose parent used the pool (libgomp), and their summation order would follow the copy's layout.
    if (snap.tensor.defined())
        snap.summary = leaf::stats(snap.tensor, t.detach());
    leaf::beginTensorLeaf(m_json, t);
    static constexpr const char* kStats[] = { "Max", "Min", "Mean", "Norm" };
    for (int i = 0; i < 4; ++i) {
        m_json.key(kStats[i]);
        snap.statsAt[static_cast<std::size_t>(i)] = m_text.size();
        m_json.null(); // stays null where there are no values (undefined or unreadable tensors)
    }
    m_json.key("requires_grad");
    m_json.boolean(t.requires_grad());
    // Max_except_inf_nan / Min_except_inf_nan, when the statistics call for them, go here, indented
    // as the line of "requires_grad".
    snap.exceptAt = m_text.size();
    const std::size_t lineStart = m_text.rfind('\n', m_text.rfind("\"requires_grad\""));
    snap.indent = lineStart == std::string::npos ? 0 : m_text.find_first_not_of(' ', lineStart + 1) - lineStart - 1;
    const at::Tensor& c = snap.tensor;
    if (m_plan.saveTensors && c.defined() && leaf::savable(c)) {
        snap.dataName = Session::dataName(m_plan.key, path);
        m_json.key("data_name");
        m_json.string(snap.dataName);
    }
    if (m_md5 && c.defined()) {
        m_json.key("md5");
        snap.md5At = m_text.size();
        m_json.string("");
    }
    m_json.endObject();
    if (c.defined()) {
        snapshotBytes += c.nbytes();
        snapshots.push_back(std::move(snap));
    }
}

bool deferFiles(const PrecisionDebugger::Impl& impl)
{
    return impl.session.config().task == Task::OverflowCheck;
}

std::optional<Diagnostic> submit(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const std::string& text,
                                 LeafWriter& leaves, bool forward)
{
    if (!leaves.background())
        return impl.session.write(plan, text, leaves.overflow, forward);
    if (impl.background->dropIfFailed()) {
        impl.session.markWriteFailed(); // the step's dump ends at the failure: record no more
        return std::nullopt;
    }
    Session::Admission admission = impl.session.admit(plan, false);
    if (!admission.writer)
        return admission.problem;
    const std::uint64_t bytes = leaves.snapshotBytes + text.size();
    impl.background->push(bytes, [writer = admission.writer, session = &impl.session, plan, text,
                                  snapshots = std::move(leaves.snapshots), tensorDir = impl.session.tensorDir(),
                                  forward] {
        return writeInBackground(*writer, *session, plan, text, snapshots, tensorDir, forward);
    });
    leaves.snapshots.clear();
    leaves.snapshotBytes = 0;
    return std::nullopt;
}

void commit(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const std::string& text, LeafWriter& leaves,
            bool forward)
{
    const bool keep = impl.session.config().task != Task::OverflowCheck || leaves.overflow;
    if (keep && plan.record && !impl.session.overflowLimitReached())
        writePending(impl, leaves.pending);
    impl.report(submit(impl, plan, text, leaves, forward));
}

void writeBackward(PrecisionDebugger::Impl& impl, const EntryPlan& plan, const variable_list& gradsOfOutputs,
                   const variable_list& gradsOfInputs)
{
    std::string text;
    PyJsonWriter json(text, 2);
    LeafWriter leaves(impl, plan, text, json, deferFiles(impl));
    json.beginObject();
    for (const auto& [part, grads, wanted] : { std::tuple { "input", &gradsOfOutputs, plan.inputs },
                                               std::tuple { "output", &gradsOfInputs, plan.outputs } }) {
        if (!wanted)
            continue;
        json.key(part);
        json.beginArray();
        for (std::size_t i = 0; i < grads->size(); ++i)
            leaves.tensor((*grads)[i], std::string(part) + "." + std::to_string(i));
        json.endArray();
    }
    json.endObject();
    commit(impl, plan, text, leaves, false);
}

} // namespace entries

void PrecisionDebugger::Impl::report(std::optional<Diagnostic> d)
{
    if (!d || problem)
        return;
    std::fprintf(stderr, "probescope collect: %s\n", d->format().c_str());
    problem = std::move(d);
}

} // namespace probescope::collect
