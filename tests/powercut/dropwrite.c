/* A drive whose firmware acknowledges some writes and never stores them: an nbdkit
 * plugin over a file that silently drops every Nth write (it returns success without
 * writing). tests/powercut.rs compiles it at run time through nbdkit's cc plugin:
 *
 *   nbdkit --filter=cache cc tests/powercut/dropwrite.c file=disk.img drop_every=N \
 *          cache=writeback
 *
 * Reads, flushes and the other writes go to the file as they are. API: nbdkit-plugin(3),
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
static uint64_t drop_every;
static uint64_t writes;
static uint64_t dropped;

static int dw_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0) {
    filename = nbdkit_realpath (value);
    return filename ? 0 : -1;
  }
  if (strcmp (key, "drop_every") == 0) {
    drop_every = strtoull (value, NULL, 10);
    return 0;
  }
  nbdkit_error ("dropwrite: unknown parameter %s", key);
  return -1;
}

static int dw_get_ready (void)
{
  if (filename == NULL) {
    nbdkit_error ("dropwrite: file= is required");
    return -1;
  }
  fd = open (filename, O_RDWR);
  if (fd < 0) {
    nbdkit_error ("dropwrite: open %s: %m", filename);
    return -1;
  }
  return 0;
}

static void dw_unload (void)
{
  if (fd >= 0)
    close (fd);
  nbdkit_debug ("dropwrite: %lu of %lu writes dropped", (unsigned long) dropped,
                (unsigned long) writes);
  free (filename);
}

static void *dw_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t dw_get_size (void *handle)
{
  struct stat st;
  if (fstat (fd, &st) == -1) {
    nbdkit_error ("dropwrite: fstat: %m");
    return -1;
  }
  return st.st_size;
}

static int dw_can_flush (void *handle) { return 1; }
static int dw_can_fua (void *handle) { return NBDKIT_FUA_NATIVE; }
static int dw_can_multi_conn (void *handle) { return 1; }

static int dw_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                     uint32_t flags)
{
  char *p = buf;
  while (count > 0) {
    ssize_t r = pread (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("dropwrite: pread: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int dw_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
                      uint32_t flags)
{
  uint64_t n = __atomic_add_fetch (&writes, 1, __ATOMIC_SEQ_CST);
  if (drop_every > 0 && n % drop_every == 0) {
    __atomic_add_fetch (&dropped, 1, __ATOMIC_SEQ_CST);
    return 0; /* acknowledged, never stored: the planted bug */
  }
  const char *p = buf;
  while (count > 0) {
    ssize_t r = pwrite (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("dropwrite: pwrite: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  if ((flags & NBDKIT_FLAG_FUA) && fdatasync (fd) == -1) {
    nbdkit_error ("dropwrite: fdatasync: %m");
    return -1;
  }
  return 0;
}

static int dw_flush (void *handle, uint32_t flags)
{
  if (fdatasync (fd) == -1) {
    nbdkit_error ("dropwrite: fdatasync: %m");
    return -1;
  }
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "dropwrite",
  .longname = "iogate test drive that drops every Nth write",
  .config = dw_config,
  .config_help = "file=<FILENAME> drop_every=<N>",
  .get_ready = dw_get_ready,
  .unload = dw_unload,
  .open = dw_open,
  .get_size = dw_get_size,
  .can_flush = dw_can_flush,
  .can_fua = dw_can_fua,
  .can_multi_conn = dw_can_multi_conn,
  .pread = dw_pread,
  .pwrite = dw_pwrite,
  .flush = dw_flush,
};

NBDKIT_REGISTER_PLUGIN (plugin)
