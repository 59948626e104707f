/* A drive whose firmware acknowledges every erase and keeps the data: an nbdkit plugin
 * over a file that answers trim and write-zeroes requests with success and changes
 * nothing (the "Format that erases nothing" trap). Reads, writes and flushes go to the
 * file as they are. tests/purge.rs compiles it at run time through nbdkit's cc plugin,
 * on the host (behind nbdfuse and a loop device, where a discard becomes an NBD trim)
 * and under QEMU's NBD block backend (where an NVMe Format becomes write-zeroes):
 *
 *   nbdkit cc tests/purge/keepdata.c file=disk.img
 *
 * It counts the erases it ignored and says so when unloaded. API: nbdkit-plugin(3),
 * NBDKIT_API_VERSION 2. */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static char *filename;
static int fd = -1;
static uint64_t ignored;

static int kd_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0) {
    filename = nbdkit_realpath (value);
    return filename ? 0 : -1;
  }
  nbdkit_error ("keepdata: unknown parameter %s", key);
  return -1;
}

static int kd_get_ready (void)
{
  if (filename == NULL) {
    nbdkit_error ("keepdata: file= is required");
    return -1;
  }
  fd = open (filename, O_RDWR);
  if (fd < 0) {
    nbdkit_error ("keepdata: open %s: %m", filename);
    return -1;
  }
  return 0;
}

static void kd_unload (void)
{
  if (fd >= 0)
    close (fd);
  nbdkit_debug ("keepdata: %lu erases acknowledged and ignored", (unsigned long) ignored);
  free (filename);
}

static void *kd_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t kd_get_size (void *handle)
{
  struct stat st;
  if (fstat (fd, &st) == -1) {
    nbdkit_error ("keepdata: fstat: %m");
    return -1;
  }
  return st.st_size;
}

static int kd_can_flush (void *handle) { return 1; }
static int kd_can_trim (void *handle) { return 1; }
static int kd_can_zero (void *handle) { return 1; }
static int kd_can_fast_zero (void *handle) { return 1; }
static int kd_can_multi_conn (void *handle) { return 1; }

static int kd_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                     uint32_t flags)
{
  char *p = buf;
  while (count > 0) {
    ssize_t r = pread (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("keepdata: pread: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int kd_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
                      uint32_t flags)
{
  const char *p = buf;
  while (count > 0) {
    ssize_t r = pwrite (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("keepdata: pwrite: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int kd_flush (void *handle, uint32_t flags)
{
  if (fdatasync (fd) == -1) {
    nbdkit_error ("keepdata: fdatasync: %m");
    return -1;
  }
  return 0;
}

/* The planted bug: the erase is acknowledged and nothing changes. */
static int kd_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  __atomic_add_fetch (&ignored, 1, __ATOMIC_SEQ_CST);
  return 0;
}

static int kd_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  __atomic_add_fetch (&ignored, 1, __ATOMIC_SEQ_CST);
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "keepdata",
  .longname = "iogate test drive that acknowledges erases and keeps the data",
  .config = kd_config,
  .config_help = "file=<FILENAME>",
  .get_ready = kd_get_ready,
  .unload = kd_unload,
  .open = kd_open,
  .get_size = kd_get_size,
  .can_flush = kd_can_flush,
  .can_trim = kd_can_trim,
  .can_zero = kd_can_zero,
  .can_fast_zero = kd_can_fast_zero,
  .can_multi_conn = kd_can_multi_conn,
  .pread = kd_pread,
  .pwrite = kd_pwrite,
  .flush = kd_flush,
  .trim = kd_trim,
  .zero = kd_zero,
};

NBDKIT_REGISTER_PLUGIN (plugin)
