! A Sherman-Morrison kernel for slaterlab/kernel.h written in Fortran 2008
! through iso_c_binding, the way CHAMP, QMC=Chem, CASINO or TurboRVB would
! expose theirs. Double precision; the same numerics as sm_kernel.c, with
! the inverse kept column-major (Fortran's order).
!
! The table of slaterlab/kernel.h is the bind(c) type slaterlab_kernel_api
! below: its components follow the C struct member by member (C's layout
! rules apply to a bind(c) type), function pointers are type(c_funptr)
! set with c_funloc of bind(c) procedures, strings are c_loc of
! NUL-terminated character variables. The kernel's state is a Fortran
! derived type whose address travels as type(c_ptr).
module slaterlab_example_fortran
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: slaterlab_kernel

  integer(c_int), parameter :: SLATERLAB_KERNEL_ABI_VERSION = 1
  integer(c_int), parameter :: SLATERLAB_OK = 0, SLATERLAB_BREAKDOWN = 1, &
                               SLATERLAB_SINGULAR = 2, SLATERLAB_BAD_ARGUMENT = 3
  integer(c_int), parameter :: SLATERLAB_DOUBLE = 1
  integer, parameter :: SLATERLAB_MESSAGE_SIZE = 256

  type, bind(c) :: slaterlab_kernel_api
    integer(c_int) :: abi_version
    type(c_ptr) :: name, version
    integer(c_int) :: precisions  ! C unsigned: same size, bits only
    integer(c_int) :: carries_updates
    real(c_double) :: default_breakdown
    type(c_funptr) :: create, destroy, reset, ratio, accept, reject, flush, log_det
    type(c_funptr) :: inverse, apply_cycle
  end type

  type :: kernel_state
    integer :: n
    real(c_double) :: breakdown
    real(c_double), allocatable :: inv(:, :)  ! A^{-1}
    real(c_double), allocatable :: column(:)  ! the pending proposal
    integer :: pending_k = -1                 ! 1-based; -1: none
    real(c_double) :: pending_ratio
    real(c_double) :: log_abs
    integer :: sign
  end type

  type(slaterlab_kernel_api), target, save :: api
  character(kind=c_char, len=16), target, save :: kernel_name = c_char_"example-fortran" // c_null_char
  character(kind=c_char, len=4), target, save :: kernel_version = c_char_"1.0" // c_null_char

contains

  subroutine say(message, text)
    type(c_ptr), value :: message
    character(len=*), intent(in) :: text
    character(kind=c_char), pointer :: buffer(:)
    integer :: i, length
    if (.not. c_associated(message)) return
    call c_f_pointer(message, buffer, [SLATERLAB_MESSAGE_SIZE])
    length = min(len(text), SLATERLAB_MESSAGE_SIZE - 1)
    do i = 1, length
      buffer(i) = text(i:i)
    end do
    buffer(length + 1) = c_null_char
  end subroutine

  function state_of(kernel) result(s)
    type(c_ptr), value :: kernel
    type(kernel_state), pointer :: s
    call c_f_pointer(kernel, s)
  end function

  function k_create(n, precision, breakdown, n_options, options, message) bind(c) result(kernel)
    integer(c_int), value :: n, precision, n_options
    real(c_double), value :: breakdown
    type(c_ptr), value :: options, message
    type(c_ptr) :: kernel
    type(kernel_state), pointer :: s
    kernel = c_null_ptr
    if (n_options /= 0 .and. c_associated(options)) then
      call say(message, "example-fortran takes no options")
      return
    end if
    if (n < 1 .or. precision /= SLATERLAB_DOUBLE) then
      call say(message, "needs N >= 1 and double precision")
      return
    end if
    allocate (s)
    s%n = n
    s%breakdown = breakdown
    allocate (s%inv(n, n), s%column(n))
    kernel = c_loc(s)
  end function

  subroutine k_destroy(kernel) bind(c)
    type(c_ptr), value :: kernel
    type(kernel_state), pointer :: s
    s => state_of(kernel)
    deallocate (s)
  end subroutine

  ! Gauss-Jordan with partial pivoting on [A | I].
  function k_reset(kernel, a, lda, message) bind(c) result(status)
    type(c_ptr), value :: kernel
    integer(c_int), value :: lda
    real(c_double), intent(in) :: a(lda, *)
    type(c_ptr), value :: message
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    real(c_double), allocatable :: m(:, :), swap(:)
    real(c_double) :: pivot
    integer :: n, c, p, i
    s => state_of(kernel)
    n = s%n
    allocate (m(n, 2 * n), swap(2 * n))
    m = 0
    m(:, 1:n) = a(1:n, 1:n)
    do i = 1, n
      m(i, n + i) = 1
    end do
    s%log_abs = 0
    s%sign = 1
    do c = 1, n
      p = c - 1 + maxloc(abs(m(c:n, c)), dim=1)
      pivot = m(p, c)
      if (pivot == 0 .or. pivot /= pivot .or. abs(pivot) > huge(pivot)) then
        call say(message, "zero or non-finite pivot: the matrix is singular")
        status = SLATERLAB_SINGULAR
        return
      end if
      if (p /= c) then
        swap = m(c, :)
        m(c, :) = m(p, :)
        m(p, :) = swap
        s%sign = -s%sign
      end if
      s%log_abs = s%log_abs + log(abs(pivot))
      if (pivot < 0) s%sign = -s%sign
      m(c, :) = m(c, :) / pivot
      do i = 1, n
        if (i /= c) m(i, :) = m(i, :) - m(i, c) * m(c, :)
      end do
    end do
    s%inv = m(:, n + 1:2 * n)
    s%pending_k = -1
    status = SLATERLAB_OK
  end function

  function k_ratio(kernel, k, column, ratio, message) bind(c) result(status)
    type(c_ptr), value :: kernel
    integer(c_int), value :: k
    real(c_double), intent(in) :: column(*)
    real(c_double), intent(out) :: ratio
    type(c_ptr), value :: message
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    s => state_of(kernel)
    if (k < 0 .or. k >= s%n) then
      call say(message, "electron index out of range")
      status = SLATERLAB_BAD_ARGUMENT
      return
    end if
    s%column = column(1:s%n)
    s%pending_k = k + 1
    ratio = dot_product(s%inv(k + 1, :), s%column)
    s%pending_ratio = ratio
    status = SLATERLAB_OK
    if (.not. (abs(ratio) >= s%breakdown) .or. abs(ratio) > huge(ratio)) status = SLATERLAB_BREAKDOWN
  end function

  ! A'^{-1} = A^{-1} - (A^{-1} a' - e_k) (e_k^T A^{-1}) / rho
  function k_accept(kernel, message) bind(c) result(status)
    type(c_ptr), value :: kernel, message
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    real(c_double), allocatable :: x(:), row(:)
    integer :: k, j
    s => state_of(kernel)
    k = s%pending_k
    if (k < 1) then
      call say(message, "accept without a pending ratio")
      status = SLATERLAB_BAD_ARGUMENT
      return
    end if
    x = matmul(s%inv, s%column)
    x(k) = x(k) - 1
    row = s%inv(k, :)
    do j = 1, s%n
      s%inv(:, j) = s%inv(:, j) - x * (row(j) / s%pending_ratio)
    end do
    s%log_abs = s%log_abs + log(abs(s%pending_ratio))
    if (s%pending_ratio < 0) s%sign = -s%sign
    s%pending_k = -1
    status = SLATERLAB_OK
  end function

  function k_reject(kernel, message) bind(c) result(status)
    type(c_ptr), value :: kernel, message
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    s => state_of(kernel)
    s%pending_k = -1
    status = SLATERLAB_OK
  end function

  function k_log_det(kernel, log_abs, sign, message) bind(c) result(status)
    type(c_ptr), value :: kernel, message
    real(c_double), intent(out) :: log_abs
    integer(c_int), intent(out) :: sign
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    s => state_of(kernel)
    log_abs = s%log_abs
    sign = s%sign
    status = SLATERLAB_OK
  end function

  function k_inverse(kernel, out, ld, message) bind(c) result(status)
    type(c_ptr), value :: kernel, message
    integer(c_int), value :: ld
    real(c_double), intent(out) :: out(ld, *)
    integer(c_int) :: status
    type(kernel_state), pointer :: s
    s => state_of(kernel)
    out(1:s%n, 1:s%n) = s%inv
    status = SLATERLAB_OK
  end function

  ! The one exported entry point: the table, filled on first use.
  function slaterlab_kernel() bind(c, name="slaterlab_kernel") result(table)
    type(c_ptr) :: table
    api%abi_version = SLATERLAB_KERNEL_ABI_VERSION
    api%name = c_loc(kernel_name)
    api%version = c_loc(kernel_version)
    api%precisions = ishft(1, SLATERLAB_DOUBLE)
    api%carries_updates = 1
    api%default_breakdown = 0
    api%create = c_funloc(k_create)
    api%destroy = c_funloc(k_destroy)
    api%reset = c_funloc(k_reset)
    api%ratio = c_funloc(k_ratio)
    api%accept = c_funloc(k_accept)
    api%reject = c_funloc(k_reject)
    api%flush = c_null_funptr  ! optional: nothing is ever queued
    api%log_det = c_funloc(k_log_det)
    api%inverse = c_funloc(k_inverse)
    api%apply_cycle = c_null_funptr
    table = c_loc(api)
  end function

end module
