/* A drive with planted tails: an nbdkit plugin over memory that delays exactly every
 * K-th read by D milliseconds and counts what it delayed. tests/qos.rs compiles it at
 * run time through nbdkit's cc plugin:
 *
 *   nbdkit cc tests/qos/slowread.c size=64M every=15000 delay_ms=25 count=/path/count
 *
 * After each delayed read, the number delayed so far is written to `count` (decimal
 * text, rewritten in place), so the test reads what the drive planted without stopping
 * it. Writes go to memory. API: nbdkit-plugin(3), NBDKIT_API_VERSION 2. */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

static int64_t size;
static char *data;
static uint64_t every;
static uint64_t delay_ms;
static char *count_path;
static int count_fd = -1;
static uint64_t reads;
static uint64_t delayed;

static int sr_config (const char *key, const char *value)
{
  if (strcmp (key, "size") == 0) {
    size = nbdkit_parse_size (value);
    return size > 0 ? 0 : -1;
  }
  if (strcmp (key, "every") == 0) {
    every = strtoull (value, NULL, 10);
    return 0;
  }
  if (strcmp (key, "delay_ms") == 0) {
    delay_ms = strtoull (value, NULL, 10);
    return 0;
  }
  if (strcmp (key, "count") == 0) {
    count_path = strdup (value);
    return count_path ? 0 : -1;
  }
  nbdkit_error ("slowread: unknown parameter %s", key);
  return -1;
}

static int sr_get_ready (void)
{
  if (size <= 0 || count_path == NULL) {
    nbdkit_error ("slowread: size= and count= are required");
    return -1;
  }
  data = calloc (1, size);
  count_fd = open (count_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (data == NULL || count_fd < 0) {
    nbdkit_error ("slowread: set-up: %m");
    return -1;
  }
  return pwrite (count_fd, "0\n", 2, 0) == 2 ? 0 : -1;
}

static void sr_unload (void)
{
  if (count_fd >= 0)
    close (count_fd);
  free (data);
  free (count_path);
}

static void *sr_open (int readonly) { return NBDKIT_HANDLE_NOT_NEEDED; }
static int64_t sr_get_size (void *handle) { return size; }
static int sr_can_multi_conn (void *handle) { return 1; }

static int sr_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                     uint32_t flags)
{
  uint64_t n = __atomic_add_fetch (&reads, 1, __ATOMIC_SEQ_CST);
  memcpy (buf, data + offset, count);
  if (every > 0 && n % every == 0) {
    struct timespec ts = { delay_ms / 1000, (delay_ms % 1000) * 1000000 };
    while (nanosleep (&ts, &ts) == -1 && errno == EINTR)
      ;
    uint64_t d = __atomic_add_fetch (&delayed, 1, __ATOMIC_SEQ_CST);
    char text[32];
    int len = snprintf (text, sizeof text, "%" PRIu64 "\n", d);
    if (pwrite (count_fd, text, len, 0) != len) {
      nbdkit_error ("slowread: count: %m");
      return -1;
    }
  }
  return 0;
}

static int sr_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
                      uint32_t flags)
{
  memcpy (data + offset, buf, count);
  return 0;
}

static struct nbdkit_plugin plugin = {
  .name = "slowread",
  .longname = "iogate test drive that delays every K-th read",
  .config = sr_config,
  .config_help = "size=<SIZE> every=<K> delay_ms=<D> count=<FILE>",
  .get_ready = sr_get_ready,
  .unload = sr_unload,
  .open = sr_open,
  .get_size = sr_get_size,
  .can_multi_conn = sr_can_multi_conn,
  .pread = sr_pread,
  .pwrite = sr_pwrite,
};

NBDKIT_REGISTER_PLUGIN (plugin)
