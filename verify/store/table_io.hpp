#pragma once
// HDF5 tables of the results file: the compound type of a row struct (its
// C++ layout, record_fields.hpp's columns), extendible tables of such rows
// (created, appended one row at a time, read whole), a record's fields as
// attributes, and walkers x sweeps series of doubles. Every HDF5 failure
// throws h5::Failure (hdf5_handle.hpp); the caller names the file.
// Internal to verify/store (result_writer.cpp, result_reader.cpp).

#include <hdf5.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "verify/store/hdf5_handle.hpp"
#include "verify/store/record_fields.hpp"

namespace slaterlab::store_detail {

using h5::Handle;

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  else static_assert(sizeof(T) == 0, "no HDF5 column type for this member type");
}

/// A row type with named event counts (StrategyCheckpoint): columns after
/// its fixed ones, one int64 each.
template <class Row>
concept WithEvents = requires(const Row& row) { event_count(row.events, ""); };

/// Where a member of `row` lies in it, in bytes.
template <class Row, class Member>
std::size_t member_offset(const Row& row, const Member& member) {
  return static_cast<std::size_t>(reinterpret_cast<const char*>(&member) -
                                  reinterpret_cast<const char*>(&row));
}

/// The bytes of one row in memory: Row's fixed members at their C++ offsets,
/// then one int64 per event.
template <class Row>
std::size_t row_bytes(std::size_t events) {
  return sizeof(Row) + events * sizeof(std::int64_t);
}

/// The in-memory compound type of Row's fixed members (C++ layout) and of
/// the named events after them (row_bytes).
template <class Row>
Handle memory_type(const std::vector<std::string>& events = {}) {
  static_assert(std::is_standard_layout_v<Row>);
  const Row row{};
  Handle type = h5::type_handle(H5Tcreate(H5T_COMPOUND, row_bytes<Row>(events.size())),
                                "make compound type");
  visit_fields(row, [&](const Field& field, const auto& member) {
    using Member = std::remove_cvref_t<decltype(member)>;
    h5::check_ok(H5Tinsert(type, field.name, member_offset(row, member), native_type<Member>()),
                 "make compound type");
  });
  for (std::size_t i = 0; i < events.size(); ++i) {
    h5::check_ok(H5Tinsert(type, events[i].c_str(), row_bytes<Row>(i), H5T_NATIVE_INT64),
                 "make compound type");
  }
  return type;
}

/// Row's fixed members and its counts of `events` (0 where it has none) into
/// `out` (row_bytes), as memory_type lays them out. Members are copied one
/// by one: a row also holds members that are not plain bytes (its events).
template <class Row>
void to_bytes(const Row& row, const std::vector<std::string>& events, unsigned char* out) {
  visit_fields(row, [&](const Field&, const auto& member) {
    std::memcpy(out + member_offset(row, member), &member, sizeof member);
  });
  if constexpr (WithEvents<Row>) {
    for (std::size_t i = 0; i < events.size(); ++i) {
      const std::int64_t count = event_count(row.events, events[i]);
      std::memcpy(out + row_bytes<Row>(i), &count, sizeof count);
    }
  }
}

/// The inverse of to_bytes.
template <class Row>
void from_bytes(const unsigned char* in, const std::vector<std::string>& events, Row& row) {
  visit_fields(row, [&](const Field&, auto& member) {
    std::memcpy(&member, in + member_offset(row, member), sizeof member);
  });
  if constexpr (WithEvents<Row>) {
    row.events.clear();
    for (std::size_t i = 0; i < events.size(); ++i) {
      std::int64_t count = 0;
      std::memcpy(&count, in + row_bytes<Row>(i), sizeof count);
      row.events.emplace_back(events[i], count);
    }
  }
}

template <class Record>
std::vector<std::string> column(const char* Field::*part) {
  std::vector<std::string> out;
  const Record record{};
  visit_fields(record, [&](const Field& field, const auto&) { out.emplace_back(field.*part); });
  return out;
}

template <class Record>
void write_fields(hid_t object, const std::string& prefix, const Record& record) {
  visit_fields(record, [&](const Field& field, const auto& value) {
    h5::write_attr(object, prefix + field.name, value);
  });
}

template <class Record>
void read_fields(hid_t object, const std::string& prefix, Record& record) {
  visit_fields(record, [&](const Field& field, auto& value) {
    if (field.optional && !h5::has_attr(object, prefix + field.name)) return;
    h5::read_attr(object, prefix + field.name, value);
  });
}

// ---- extendible tables -------------------------------------------------------

constexpr const char* kCheckpoints = "checkpoints";
constexpr hsize_t kChunkRows = 64;  // rows are ~100-200 bytes; checkpoints are few

struct Table {
  Handle dataset;
  Handle row_type;  // memory type
  hsize_t rows = 0;
  std::vector<std::string> events;  // the event columns after the fixed ones
};

template <class Row>
Table create_table(hid_t parent, const char* name = kCheckpoints,
                   const std::vector<EventColumn>& events = {}) {
  const auto op = fmt::format("create dataset '{}' in {}", name, h5::object_name(parent));
  Table table;
  for (const EventColumn& event : events) table.events.push_back(event.name);
  table.row_type = memory_type<Row>(table.events);
  // On disk the compound is packed: no padding bytes, same members.
  Handle file_type = h5::type_handle(H5Tcopy(table.row_type), op);
  h5::check_ok(H5Tpack(file_type), op);
  const hsize_t empty = 0, unlimited = H5S_UNLIMITED;
  Handle space = h5::space_handle(H5Screate_simple(1, &empty, &unlimited), op);
  Handle plist = h5::plist_handle(H5Pcreate(H5P_DATASET_CREATE), op);
  h5::check_ok(H5Pset_chunk(plist, 1, &kChunkRows), op);
  // Most tables hold a few rows of a 64-row chunk; deflate keeps the unused
  // part (and the repetitive counters) from filling the file. Readers need
  // nothing special: gzip is built into every HDF5 and h5py.
  h5::check_ok(H5Pset_deflate(plist, 4), op);
  table.dataset = h5::dataset_handle(
      H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT), op);
  std::vector<std::string> units = column<Row>(&Field::unit);
  std::vector<std::string> descriptions = column<Row>(&Field::description);
  for (const EventColumn& event : events) {
    units.emplace_back("count");
    descriptions.push_back(event.description);
  }
  h5::write_attr(table.dataset, "column_units", units);
  h5::write_attr(table.dataset, "column_descriptions", descriptions);
  return table;
}

template <class Row>
void append_row(Table& table, const Row& row) {
  const auto op = "append a row to " + h5::object_name(table.dataset);
  const hsize_t rows = table.rows + 1, start = table.rows, one = 1;
  h5::check_ok(H5Dset_extent(table.dataset, &rows), op);
  Handle file_space = h5::space_handle(H5Dget_space(table.dataset), op);
  h5::check_ok(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &one, nullptr), op);
  Handle memory_space = h5::space_handle(H5Screate_simple(1, &one, nullptr), op);
  std::vector<unsigned char> bytes(row_bytes<Row>(table.events.size()));
  to_bytes(row, table.events, bytes.data());
  h5::check_ok(
      H5Dwrite(table.dataset, table.row_type, memory_space, file_space, H5P_DEFAULT, bytes.data()),
      op);
  table.rows = rows;
}

/// The names of a stored table's columns that are not Row's fixed members:
/// Row's event columns where it has them (every integer column besides the
/// fixed ones; a file from before events were named has its flushes and
/// splits there), none otherwise.
template <class Row>
std::vector<std::string> event_columns(hid_t stored_type, std::string_view op) {
  std::vector<std::string> events;
  if constexpr (WithEvents<Row>) {
    std::vector<std::string> fixed = column<Row>(&Field::name);
    const int members = H5Tget_nmembers(stored_type);
    if (members < 0) throw h5::Failure(std::string(op), "cannot read the columns");
    for (unsigned i = 0; i < unsigned(members); ++i) {
      if (H5Tget_member_class(stored_type, i) != H5T_INTEGER) continue;
      char* raw = H5Tget_member_name(stored_type, i);
      if (!raw) throw h5::Failure(std::string(op), "cannot read a column's name");
      std::string name(raw);
      H5free_memory(raw);
      if (std::find(fixed.begin(), fixed.end(), name) == fixed.end()) events.push_back(name);
    }
  }
  return events;
}

template <class Row>
std::vector<Row> read_table(hid_t parent, const char* name = kCheckpoints) {
  const auto op = fmt::format("read dataset '{}' in {}", name, h5::object_name(parent));
  Handle dataset = h5::dataset_handle(H5Dopen2(parent, name, H5P_DEFAULT), op);
  const h5::Declared declared = h5::declared_dataset(dataset, op);
  if (declared.type_class != H5T_COMPOUND) throw h5::Failure(op, "not a compound dataset");
  if (declared.dims.size() != 1)
    throw h5::Failure(op, "a table must be 1-D (one row per record), got " + declared.shape_text());
  Handle stored = h5::type_handle(H5Dget_type(dataset), op);
  // HDF5 matches compound members by name; a missing one would be left
  // silently at its default, so require every column except the optional
  // ones (added later), which older files lack and keep their defaults.
  const Row probe{};
  visit_fields(probe, [&](const Field& field, const auto&) {
    if (!field.optional && H5Tget_member_index(stored, field.name) < 0)
      throw h5::Failure(op, fmt::format("missing column '{}'", field.name));
  });
  const std::vector<std::string> events = event_columns<Row>(stored, op);
  const std::uint64_t count = h5::require_stored(dataset, declared, op);
  const std::size_t size = row_bytes<Row>(events.size());
  std::vector<unsigned char> bytes(h5::checked_bytes(count, size, op));
  // Every row starts as a default one: a column the file lacks keeps it.
  std::vector<unsigned char> fresh(size);
  to_bytes(probe, events, fresh.data());
  for (std::size_t at = 0; at < bytes.size(); at += size)
    std::memcpy(bytes.data() + at, fresh.data(), size);
  std::vector<Row> rows(bytes.size() / size);
  if (!rows.empty()) {
    Handle type = memory_type<Row>(events);
    h5::check_ok(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), op);
  }
  for (std::size_t i = 0; i < rows.size(); ++i) from_bytes(bytes.data() + i * size, events, rows[i]);
  return rows;
}

/// Writes a whole table of rows at once (a run's walkers, its blocking).
template <class Row>
void write_table(hid_t parent, const char* name, const std::vector<Row>& rows) {
  Table table = create_table<Row>(parent, name);
  for (const Row& row : rows) append_row(table, row);
}

/// Energy series: walkers x sweeps doubles, NaN after a failed walker's end.
void write_series(hid_t parent, const char* name, const std::vector<std::vector<double>>& series);

/// expected_rows: the walkers of the run, one row each.
std::vector<std::vector<double>> read_series(hid_t parent, const char* name,
                                             std::uint64_t expected_rows);

}  // namespace slaterlab::store_detail
