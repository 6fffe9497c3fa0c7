#include "verify/store/table_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace slaterlab::store_detail {

/// Energy series: walkers x sweeps doubles, NaN after a failed walker's end.
void write_series(hid_t parent, const char* name, const std::vector<std::vector<double>>& series) {
  const auto op = fmt::format("create dataset '{}' in {}", name, h5::object_name(parent));
  std::size_t columns = 0;
  for (const auto& s : series) columns = std::max(columns, s.size());
  std::vector<double> data(series.size() * columns, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t w = 0; w < series.size(); ++w)
    std::copy(series[w].begin(), series[w].end(), data.begin() + std::ptrdiff_t(w * columns));
  const hsize_t dims[2] = {series.size(), columns};
  Handle space = h5::space_handle(H5Screate_simple(2, dims, nullptr), op);
  Handle dataset = h5::dataset_handle(
      H5Dcreate2(parent, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), op);
  if (!data.empty())
    h5::check_ok(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), op);
  h5::write_attr(dataset, "units", std::string("E"));
  h5::write_attr(dataset, "description",
                 std::string("local energy after each measured sweep: row = walker, column = sweep; "
                             "NaN after the end of a walker whose strategy gave up"));
}

/// expected_rows: the walkers of the run, one row each.
std::vector<std::vector<double>> read_series(hid_t parent, const char* name,
                                             std::uint64_t expected_rows) {
  const auto op = fmt::format("read dataset '{}' in {}", name, h5::object_name(parent));
  Handle dataset = h5::dataset_handle(H5Dopen2(parent, name, H5P_DEFAULT), op);
  const h5::Declared declared = h5::declared_dataset(dataset, op);
  if (declared.dims.size() != 2) throw h5::Failure(op, "not a 2-D dataset");
  if (declared.type_class != H5T_FLOAT) throw h5::Failure(op, "not floating-point numbers");
  const hsize_t dims[2] = {declared.dims[0], declared.dims[1]};
  if (dims[0] != expected_rows)
    throw h5::Failure(op, fmt::format("has {} rows, but the run has {} walkers", dims[0],
                                      expected_rows));
  const std::uint64_t count = h5::require_stored(dataset, declared, op);
  std::vector<double> data(h5::checked_bytes(count, sizeof(double), op) / sizeof(double));
  if (!data.empty())
    h5::check_ok(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), op);
  std::vector<std::vector<double>> series(dims[0]);
  for (hsize_t w = 0; w < dims[0]; ++w) {
    auto first = data.begin() + std::ptrdiff_t(w * dims[1]);
    auto last = first + std::ptrdiff_t(dims[1]);
    while (last != first && std::isnan(*(last - 1))) --last;
    series[w].assign(first, last);
  }
  return series;
}

}  // namespace slaterlab::store_detail
