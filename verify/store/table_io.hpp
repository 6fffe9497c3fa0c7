#pragma once
// HDF5 tables of the results file: the compound type of a row struct (its
// C++ layout, record_fields.hpp's columns), extendible tables of such rows
// (created, appended one row at a time, read whole), a record's fields as
// attributes, and walkers x sweeps series of doubles. Every HDF5 failure
// throws h5::Failure (hdf5_handle.hpp); the caller names the file.
// Internal to verify/store (result_writer.cpp, result_reader.cpp).

#include <hdf5.h>

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
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

/// The in-memory compound type of Row (C++ layout).
template <class Row>
Handle memory_type() {
  static_assert(std::is_standard_layout_v<Row>);
  const Row row{};
  Handle type = h5::type_handle(H5Tcreate(H5T_COMPOUND, sizeof(Row)), "make compound type");
  visit_fields(row, [&](const Field& field, const auto& member) {
    const auto offset = static_cast<std::size_t>(reinterpret_cast<const char*>(&member) -
                                                 reinterpret_cast<const char*>(&row));
    using Member = std::remove_cvref_t<decltype(member)>;
    h5::check_ok(H5Tinsert(type, field.name, offset, native_type<Member>()),
                 "make compound type");
  });
  return type;
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
};

template <class Row>
Table create_table(hid_t parent, const char* name = kCheckpoints) {
  const auto op = fmt::format("create dataset '{}' in {}", name, h5::object_name(parent));
  Table table{Handle{}, memory_type<Row>(), 0};
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
  h5::write_attr(table.dataset, "column_units", column<Row>(&Field::unit));
  h5::write_attr(table.dataset, "column_descriptions", column<Row>(&Field::description));
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
  h5::check_ok(H5Dwrite(table.dataset, table.row_type, memory_space, file_space, H5P_DEFAULT, &row),
               op);
  table.rows = rows;
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
  const std::uint64_t count = h5::require_stored(dataset, declared, op);
  std::vector<Row> rows(h5::checked_bytes(count, sizeof(Row), op) / sizeof(Row));
  if (!rows.empty()) {
    Handle type = memory_type<Row>();
    h5::check_ok(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), op);
  }
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
