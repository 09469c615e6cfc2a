#include "collector/live/live_record_source.h"

#include <cstring>
#include <stdexcept>

#include "collector/records/byte_cursor.h"
#include "collector/records/perf_abi.h"
#include "collector/records/perf_attr.h"
#include "collector/live/perf_event_set.h"
#include "collector/host/proc_tasks.h"
#include "collector/live/process_synthesizer.h"

namespace profcollect {

namespace {

PerfAttr to_perf_attr(const perf_event_attr& attr) {
  // The same parser as perf.data attrs, so the layout is derived exactly as for a file.
  return parse_perf_attr({reinterpret_cast<const uint8_t*>(&attr), sizeof attr});
}

// Several attrs in one buffer must be told apart and share a trailer (perf's
// evlist__valid_sample_id_all); one attr needs neither.
void check_attrs_share_buffers(const std::vector<LiveAttr>& attrs) {
  if (attrs.empty()) throw std::invalid_argument("a live record source needs an attr");
  if (attrs.size() == 1) return;
  const perf_event_attr& first = attrs[0].attr;
  constexpr uint64_t kTrailer = perf_abi::kSampleIdTrailerBits;
  for (const LiveAttr& a : attrs) {
    if (!(a.attr.sample_type & PERF_SAMPLE_IDENTIFIER))
      throw std::invalid_argument("event " + a.name +
                                  " lacks PERF_SAMPLE_IDENTIFIER, which "
                                  "events sharing a ring buffer need to be told apart");
    if (a.attr.sample_id_all != first.sample_id_all ||
        (a.attr.sample_type & kTrailer) != (first.sample_type & kTrailer))
      throw std::invalid_argument("events " + attrs[0].name + " and " + a.name +
                                  " differ in their sample_id_all trailer");
  }
}

std::vector<LiveAttr> one_attr(const perf_event_attr& attr, std::span<const uint64_t> ids,
                               std::string name) {
  return {LiveAttr{attr, std::vector<uint64_t>(ids.begin(), ids.end()), std::move(name)}};
}

std::vector<LiveAttr> attrs_of(const PerfEventSet& events) {
  std::vector<LiveAttr> out;
  for (size_t i = 0; i < events.member_count(); ++i)
    out.push_back(LiveAttr{events.member(i).attr, events.ids(i), events.member(i).name});
  return out;
}

}  // namespace

LiveRecordSource::LiveRecordSource(std::vector<LiveAttr> attrs, std::vector<RingBuffer*> buffers)
    : intake_decoder_(state_),
      output_decoder_(state_),
      resync_decoder_(state_),
      reader_(std::move(buffers)) {
  check_attrs_share_buffers(attrs);
  for (const LiveAttr& a : attrs) {
    const uint32_t index = state_.add_attr(to_perf_attr(a.attr), a.ids);
    // Named by index: an attr may have no ids yet (tests), which name_by_update() needs.
    if (!a.name.empty()) state_.info().attrs[index].name = a.name;
  }
  layout_ = SampleIdLayout{attrs[0].attr.sample_type, attrs[0].attr.sample_id_all != 0};
}

LiveRecordSource::LiveRecordSource(const perf_event_attr& attr, std::span<const uint64_t> ids,
                                   std::vector<RingBuffer*> buffers, std::string event_name)
    : LiveRecordSource(one_attr(attr, ids, std::move(event_name)), std::move(buffers)) {}

LiveRecordSource::LiveRecordSource(PerfEventSet& events)
    : LiveRecordSource(attrs_of(events), events.ring_buffers()) {
  pollable_fds_ = events.pollable_fds();
}

LiveRecordSource::LiveRecordSource(PerfEventSet& events, std::string event_name)
    : LiveRecordSource(events) {
  if (!event_name.empty()) state_.info().attrs[0].name = std::move(event_name);
}

void LiveRecordSource::count(const Record& r) {
  if (std::holds_alternative<SampleRecord>(r)) {
    ++counters_.samples;
  } else if (const auto* lost = std::get_if<LostRecord>(&r)) {
    if (lost->is_lost_samples) {
      counters_.dropped_samples += lost->lost;
    } else {
      ++counters_.lost_records;
      counters_.lost_samples += lost->lost;
    }
  } else if (const auto* t = std::get_if<ThrottleRecord>(&r)) {
    ++(t->unthrottle ? counters_.unthrottles : counters_.throttles);
  } else if (const auto* a = std::get_if<AuxRecord>(&r)) {
    ++counters_.aux_records;
    counters_.aux_bytes += a->aux_size;
    if (a->truncated()) ++counters_.aux_truncated;
    if (a->partial()) ++counters_.aux_partial;
    if (a->collision()) ++counters_.aux_collisions;
  }
}

void LiveRecordSource::push_raw(std::span<const uint8_t> bytes, uint32_t stream) {
  RawRecord raw;
  raw.type = perf_abi::load<uint32_t>(bytes.data());
  raw.misc = perf_abi::load<uint16_t>(bytes.data() + 4);
  raw.bytes = bytes;
  raw.offset = counters_.bytes;
  raw.stream = stream;
  uint64_t time;
  try {
    time = intake_decoder_.peek_time(raw);
  } catch (const RecordFormatError&) {
    ++counters_.malformed;
    return;
  }
  orderer_.push(raw, time);
}

void LiveRecordSource::add_synthesized(std::span<const uint8_t> records) {
  while (records.size() >= perf_abi::kEventHeaderSize) {
    const uint16_t size = perf_abi::load<uint16_t>(records.data() + 6);
    if (size < perf_abi::kEventHeaderSize || size > records.size()) {
      ++counters_.malformed;
      return;
    }
    push_raw(records.first(size), kSynthesizedStream);
    ++counters_.synthesized;
    records = records.subspan(size);
  }
}

bool LiveRecordSource::add_existing_process(pid_t pid) {
  synthesis_buffer_.clear();
  if (!synthesize_process(pid, layout_, synthesis_buffer_)) return false;
  add_synthesized(synthesis_buffer_);
  return true;
}

bool LiveRecordSource::synthesize_now(pid_t pid,
                                      const std::function<void(const Record&)>& consume) {
  resync_buffer_.clear();
  if (!synthesize_process(pid, layout_, resync_buffer_)) return false;
  CommRecord exec;
  exec.pid = exec.tid = static_cast<uint32_t>(pid);
  exec.exec = true;
  consume(Record(exec));
  std::span<const uint8_t> records(resync_buffer_);
  Record decoded;
  while (records.size() >= perf_abi::kEventHeaderSize) {
    const uint16_t size = perf_abi::load<uint16_t>(records.data() + 6);
    if (size < perf_abi::kEventHeaderSize || size > records.size()) break;
    RawRecord raw;
    raw.type = perf_abi::load<uint32_t>(records.data());
    raw.misc = perf_abi::load<uint16_t>(records.data() + 4);
    raw.bytes = records.first(size);
    raw.stream = kSynthesizedStream;
    records = records.subspan(size);
    try {
      resync_decoder_.decode(raw, decoded);
    } catch (const RecordFormatError&) {
      ++counters_.malformed;
      continue;
    }
    ++counters_.synthesized;
    consume(decoded);
  }
  return true;
}

void LiveRecordSource::add_existing_processes(const CollectionTarget& target) {
  if (target.kind == TargetKind::SystemWide) {
    add_all_existing_processes();
  } else if (target.kind == TargetKind::Processes) {
    for (pid_t p : target.pids) add_existing_process(p);
  }
}

size_t LiveRecordSource::add_all_existing_processes() {
  size_t added = 0;
  for (pid_t pid : list_processes())
    if (add_existing_process(pid)) ++added;
  return added;
}

void LiveRecordSource::read_spe(uint32_t pmu_type, std::vector<SpeLiveReader::Area> areas) {
  for (size_t i = 0; i < areas.size() && i < reader_.buffer_count(); ++i)
    reader_.set_aux(i, areas[i].aux);
  spe_ = std::make_unique<SpeLiveReader>(state_, pmu_type, std::move(areas));
}

// A PERF_RECORD_AUX read from buffer `stream`, with what the reader copied of its AUX bytes:
// decoded now into samples that join the time order.
void LiveRecordSource::consume_aux(std::span<const uint8_t> bytes, uint32_t stream,
                                   const SpeLiveReader::AuxCopy& copy) {
  RawRecord raw;
  raw.type = perf_abi::kAux;
  raw.misc = perf_abi::load<uint16_t>(bytes.data() + 4);
  raw.bytes = bytes;
  raw.offset = counters_.bytes;
  raw.stream = stream;
  Record decoded;
  try {
    intake_decoder_.decode(raw, decoded);
  } catch (const RecordFormatError&) {
    return;  // counted as malformed when the record itself leaves the time order
  }
  if (const auto* aux = std::get_if<AuxRecord>(&decoded))
    spe_->consume(stream, raw, *aux, copy,
                  [this](const RawRecord& r, uint64_t t) { orderer_.push(r, t); });
}

uint64_t LiveRecordSource::drain() {
  pass_.clear();
  const uint64_t read = reader_.read_pass(pass_);
  ingest(pass_);
  return read;
}

void LiveRecordSource::ingest(const RecordBatch& batch) {
  using Kind = RecordBatch::Kind;
  for (const auto& [attr, id] : batch.new_ids) state_.add_id(attr, id);
  const auto& pieces = batch.pieces;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const RecordBatch::Piece& p = pieces[i];
    if (p.kind != Kind::Record) continue;  // AUX bytes go with the record before them
    const std::span<const uint8_t> record = batch.piece_bytes(p);
    if (spe_ && perf_abi::load<uint32_t>(record.data()) == perf_abi::kAux &&
        i + 1 < pieces.size() && pieces[i + 1].kind != Kind::Record) {
      const RecordBatch::Piece& a = pieces[++i];
      SpeLiveReader::AuxCopy copy;
      copy.state = a.kind == Kind::AuxBytes     ? SpeLiveReader::AuxCopy::State::Copied
                   : a.kind == Kind::AuxDropped ? SpeLiveReader::AuxCopy::State::Dropped
                                                : SpeLiveReader::AuxCopy::State::Invalid;
      copy.bytes = batch.piece_bytes(a);
      copy.wrapped = a.wrapped;
      copy.unannounced = a.unannounced;
      consume_aux(record, p.stream, copy);
    }
    push_raw(record, p.stream);
    ++counters_.records;
    counters_.bytes += record.size();
  }
  counters_.skipped_bytes = batch.totals.skipped_bytes;
  counters_.corrupt_heads = batch.totals.corrupt_heads;
  counters_.backlog_dropped_samples = batch.totals.dropped.samples;
  counters_.backlog_dropped_records = batch.totals.dropped.records;
  ++counters_.passes;
  orderer_.finish_round();
}

void LiveRecordSource::finish() { orderer_.finish_all(); }

void LiveRecordSource::release_until(uint64_t time) { orderer_.release_until(time); }

bool LiveRecordSource::next(Record& out) {
  RawRecord raw;
  while (orderer_.pop(raw)) {
    if (spe_) {
      spe_->observe(raw);
      if (spe_->is_sample(raw)) {
        SampleRecord sample;
        try {
          spe_->decode(raw, sample);
        } catch (const RecordFormatError&) {
          ++counters_.malformed;
          continue;
        }
        out = sample;
        ++counters_.samples;
        return true;
      }
    }
    try {
      output_decoder_.decode(raw, out);
    } catch (const RecordFormatError&) {
      ++counters_.malformed;  // skipped, as a record that is damaged in the buffer
      continue;
    }
    // Counted once decoded, the only time it is.
    count(out);
    return true;
  }
  return false;
}

}  // namespace profcollect
