/* A drive that does not write atomically: an nbdkit plugin over a file that stores only
 * the first `tear_at` bytes of its `tear_write`th write and then never completes it, as
 * a drive whose power fails halfway through programming a write would leave it.
 * tests/atomic.rs compiles it at run time through nbdkit's cc plugin:
 *
 *   nbdkit cc tests/powercut/tear.c file=disk.img tear_write=N tear_at=BYTES \
 *          done=marker
 *
 * Once the first part is in the file the plugin creates `done` (the host's cue to cut
 * the power) and holds the request until nbdkit is killed. Every other request goes to
 * the file as it is. API: nbdkit-plugin(3), NBDKIT_API_VERSION 2. */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static char *filename;
static char *done;
static int fd = -1;
static uint64_t tear_write;
static uint64_t tear_at;
static uint64_t writes;

static int tr_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0) {
    filename = nbdkit_realpath (value);
    return filename ? 0 : -1;
  }
  if (strcmp (key, "done") == 0) {
    done = strdup (value);
    return done ? 0 : -1;
  }
  if (strcmp (key, "tear_write") == 0) {
    tear_write = strtoull (value, NULL, 10);
    return 0;
  }
  if (strcmp (key, "tear_at") == 0) {
    tear_at = strtoull (value, NULL, 10);
    return 0;
  }
  nbdkit_error ("tear: unknown parameter %s", key);
  return -1;
}

static int tr_get_ready (void)
{
  if (filename == NULL || done == NULL || tear_write == 0 || tear_at == 0) {
    nbdkit_error ("tear: file=, done=, tear_write= and tear_at= are required");
    return -1;
  }
  fd = open (filename, O_RDWR);
  if (fd < 0) {
    nbdkit_error ("tear: open %s: %m", filename);
    return -1;
  }
  return 0;
}

static void tr_unload (void)
{
  if (fd >= 0)
    close (fd);
  free (filename);
  free (done);
}

static void *tr_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t tr_get_size (void *handle)
{
  struct stat st;
  if (fstat (fd, &st) == -1) {
    nbdkit_error ("tear: fstat: %m");
    return -1;
  }
  return st.st_size;
}

static int tr_can_flush (void *handle) { return 1; }
static int tr_can_multi_conn (void *handle) { return 1; }

static int full_pwrite (const char *p, uint64_t count, uint64_t offset)
{
  while (count > 0) {
    ssize_t r = pwrite (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("tear: pwrite: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int tr_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                     uint32_t flags)
{
  char *p = buf;
  while (count > 0) {
    ssize_t r = pread (fd, p, count, offset);
    if (r <= 0) {
      nbdkit_error ("tear: pread: %m");
      return -1;
    }
    p += r; count -= r; offset += r;
  }
  return 0;
}

static int tr_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
                      uint32_t flags)
{
  uint64_t n = __atomic_add_fetch (&writes, 1, __ATOMIC_SEQ_CST);
  if (n == tear_write && tear_at < count) {
    if (full_pwrite (buf, tear_at, offset) == -1 || fdatasync (fd) == -1)
      return -1;
    int marker = open (done, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (marker >= 0) {
      char line[64];
      int len = snprintf (line, sizeof line, "%lu %u\n", (unsigned long) offset, count);
      if (write (marker, line, len) != len)
        nbdkit_debug ("tear: short marker write");
      close (marker);
    }
    nbdkit_debug ("tear: write %lu at %lu: %lu of %u bytes stored, holding",
                  (unsigned long) n, (unsigned long) offset, (unsigned long) tear_at,
                  count);
    for (;;)
      pause (); /* the power is failing: this write never completes */
  }
  if (full_pwrite (buf, count, offset) == -1)
    return -1;
  if ((flags & NBDKIT_FLAG_FUA) && fdatasync (fd) == -1) {
    nbdkit_error ("tear: fdatasync: %m");
    return -1;
  }
  return 0;
}

static int tr_flush (void *handle, uint32_t flags)
{
  if (fdatasync (fd) == -1) {
    nbdkit_error ("tear: fdatasync: %m");
    return -1;
  }
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "tear",
  .longname = "iogate test drive that stores only part of one write before the cut",
  .config = tr_config,
  .config_help = "file=<FILENAME> tear_write=<N> tear_at=<BYTES> done=<MARKER>",
  .get_ready = tr_get_ready,
  .unload = tr_unload,
  .open = tr_open,
  .get_size = tr_get_size,
  .can_flush = tr_can_flush,
  .can_multi_conn = tr_can_multi_conn,
  .pread = tr_pread,
  .pwrite = tr_pwrite,
  .flush = tr_flush,
};

NBDKIT_REGISTER_PLUGIN (plugin)
