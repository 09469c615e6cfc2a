// The RecordSource of a live collection: records read from the per-CPU ring buffers, put in
// time order, decoded by the same RecordDecoder as perf.data files. Records synthesized from
// /proc for processes that already run come first.
//
// A buffer may hold the records of several attrs (a sampling event and a side-band dummy
// event): each attr is registered with its own ids, and a record goes to the attr its id names,
// as perf reads a perf.data of several events. That needs what perf needs (evlist's
// valid_sample_id_all): every attr carries PERF_SAMPLE_IDENTIFIER (the id is then the first word
// of a sample and the last of a trailer, whatever else the attrs hold) and the same
// sample_id_all trailer. Records synthesized from /proc carry the first attr's trailer with id 0,
// which names the first attr.
//
// The event loop drives it:
//   drain()  on a readable fd or a timer: one pass over every buffer (each record copied into
//            the TimeOrderer, the buffer's space given back to the kernel), then a round end as
//            perf record's FINISHED_ROUND: everything up to the newest time read by the pass
//            before this one goes out. drain() is reader().read_pass() then ingest(): a
//            collection with a drain thread (collector/pipeline/drain_thread.h) runs the first half there
//            and the second on the session's thread; reader() then belongs to the drain thread
//            and everything else to the session's.
//   next()   returns the records that are ready, in time order; false means "none ready now",
//            not the end (a record is ready after the drain that follows the one reading it)
//   finish() at the end, after the last drain(): everything queued becomes ready
// A record returned by next() is valid until the next call to next() or drain().
// drain() allocates nothing once the orderer's arena has grown to a pass's worth of records.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "collector/pipeline/collection_target.h"
#include "collector/records/perf_session_state.h"
#include "collector/records/record_decoder.h"
#include "collector/live/record_batch.h"
#include "collector/records/record_source.h"
#include "collector/live/ring_buffer_drain.h"
#include "collector/live/ring_buffer.h"
#include "collector/live/spe_live_reader.h"
#include "collector/live/synthetic_records.h"
#include "collector/records/time_orderer.h"

namespace profcollect {

class PerfEventSet;

// One attr of the records a source reads.
struct LiveAttr {
  perf_event_attr attr;
  std::vector<uint64_t> ids;  // its events' ids (PERF_EVENT_IOC_ID)
  std::string name;           // session().attrs[i].name: "cpu-clock:u", "dummy:u"
};

struct LiveCounters {
  uint64_t passes = 0;           // drain() calls
  uint64_t records = 0;          // kernel records read
  uint64_t bytes = 0;            // their bytes
  uint64_t samples = 0;          // PERF_RECORD_SAMPLE
  uint64_t lost_records = 0;     // PERF_RECORD_LOST: the ring buffer was full
  uint64_t lost_samples = 0;     //   the records they say were lost
  uint64_t dropped_samples = 0;  // PERF_RECORD_LOST_SAMPLES: dropped inside the kernel
  uint64_t throttles = 0;        // PERF_RECORD_THROTTLE: the kernel slowed sampling down
  uint64_t unthrottles = 0;
  uint64_t aux_records = 0;              // PERF_RECORD_AUX: AUX-area data written (SPE, PT)
  uint64_t aux_bytes = 0;                //   the bytes they say were written
  uint64_t aux_truncated = 0;            //   of them, marked TRUNCATED: the AUX area was full
  uint64_t aux_partial = 0;              //   of them, marked PARTIAL: the hardware left a gap
  uint64_t aux_collisions = 0;           //   of them, marked COLLISION: samples collided (SPE)
  uint64_t backlog_dropped_samples = 0;  // samples the drain thread left out: its backlog was full
  uint64_t backlog_dropped_records = 0;  // other records it left out (side-band: resync)
  uint64_t synthesized = 0;              // records made from /proc
  uint64_t malformed = 0;                // records that did not decode (skipped)
  uint64_t skipped_bytes = 0;            // unreadable buffer contents (corrupt header), skipped
  uint64_t corrupt_heads = 0;  // passes whose data_head was impossible (the buffer restarted)
};

class LiveRecordSource : public RecordSource {
 public:
  // RawRecord::stream of synthesized records; kernel records carry their buffer's index.
  static constexpr uint32_t kSynthesizedStream = UINT32_MAX;

  // Reads `buffers` (not owned; they outlive the source), whose records follow `attrs`, in
  // that order in session().attrs. Throws std::invalid_argument when there are none, or when
  // several do not share an IDENTIFIER trailer (see above).
  LiveRecordSource(std::vector<LiveAttr> attrs, std::vector<RingBuffer*> buffers);
  // One attr, named `event_name` in session().attrs[0] ("cpu-clock:u").
  LiveRecordSource(const perf_event_attr& attr, std::span<const uint64_t> ids,
                   std::vector<RingBuffer*> buffers, std::string event_name);
  // Reads the buffers of `events`, which must outlive the source: one attr per member, named as
  // the member.
  explicit LiveRecordSource(PerfEventSet& events);
  // The same, the first member named `event_name`.
  LiveRecordSource(PerfEventSet& events, std::string event_name);

  // Queues COMM and MMAP2 records for process `pid` read from /proc. Call after the events are
  // enabled and before the first drain(). False if the process is gone.
  bool add_existing_process(pid_t pid);
  // The same for every process in /proc (system-wide); returns how many were added.
  size_t add_all_existing_processes();
  // The same for the processes of `target` that exist now: every process (system-wide), the
  // target's pids, none for a command (its records start at its exec).
  void add_existing_processes(const CollectionTarget& target);
  // Reads process `pid` from /proc now and gives its records, decoded, straight to `consume`
  // (not through the time order), after a COMM with the exec flag that clears what was known of
  // it: a resync after records were lost. False (nothing given) if the process is gone.
  bool synthesize_now(pid_t pid, const std::function<void(const Record&)>& consume);
  // Queues raw records made elsewhere (tests, other synthesizers), same rules.
  void add_synthesized(std::span<const uint8_t> records);

  // The buffers' AUX areas (by buffer index, as `buffers`) hold the Arm SPE data of the attr of
  // type `pmu_type`: each PERF_RECORD_AUX a drain reads has its bytes decoded into samples
  // (spe_live_reader.h), which join the time order; the bytes go back to the kernel at the end
  // of the buffer's pass. Call before the first drain().
  void read_spe(uint32_t pmu_type, std::vector<SpeLiveReader::Area> areas);
  // The SPE reader's counters; null without read_spe().
  const SpeLiveReader* spe() const { return spe_.get(); }

  // One pass over every buffer; returns the bytes read.
  uint64_t drain();
  // The reading half of drain(): the buffers, read into batches (by the drain thread).
  RingBufferDrain& reader() { return reader_; }
  // The other half: a batch the reader filled, put in time order as one pass (a round). The
  // batch may be reused once this returns.
  void ingest(const RecordBatch& batch);
  // No more drains will come: what is queued becomes ready.
  void finish();
  // Records up to `time` become ready now (an engine that counts samples elsewhere closes an
  // interval at `time` and needs every side-band record before it).
  void release_until(uint64_t time);

  bool next(Record& out) override;
  const SessionInfo& session() const override { return state_.info(); }
  uint64_t bytes_read() const override { return counters_.bytes; }
  uint64_t bytes_total() const override { return 0; }

  // Records and bytes as drain() reads them; the kinds of records (samples, losses, throttling,
  // malformed) as next() decodes them.
  const LiveCounters& counters() const { return counters_; }
  // The fds to wait on (from the PerfEventSet; empty for the buffer-only constructor).
  std::vector<int> pollable_fds() const { return pollable_fds_; }
  // The layout synthesized records need (the first attr's), for other synthesizers.
  SampleIdLayout sample_id_layout() const { return layout_; }
  size_t queued() const { return orderer_.queued(); }

 private:
  void count(const Record& r);
  void push_raw(std::span<const uint8_t> bytes, uint32_t stream);
  void consume_aux(std::span<const uint8_t> bytes, uint32_t stream,
                   const SpeLiveReader::AuxCopy& copy);

  PerfSessionState state_;
  RecordDecoder intake_decoder_;  // reads each record's time for ordering (peek_time)
  RecordDecoder output_decoder_;
  RecordDecoder resync_decoder_;  // synthesize_now()'s, beside a record next() returned
  TimeOrderer orderer_;
  RingBufferDrain reader_;
  RecordBatch pass_;  // drain()'s batch, reused
  std::vector<int> pollable_fds_;
  SampleIdLayout layout_;
  LiveCounters counters_;
  std::vector<uint8_t> synthesis_buffer_;
  std::vector<uint8_t> resync_buffer_;
  std::unique_ptr<SpeLiveReader> spe_;
};

}  // namespace profcollect
