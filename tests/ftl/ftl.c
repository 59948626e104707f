/* A drive that behaves like an SSD: an nbdkit plugin with a simulated flash translation
 * layer (page mapping, erase blocks, over-provisioning, greedy garbage collection in the
 * foreground and during idle, TRIM, parallel channels, service times). tests/ftl.rs and
 * bench/ compile it at run time through nbdkit's cc plugin:
 *
 *   nbdkit cc tests/ftl/ftl.c size=64M stats=/path/stats [page=4K pages_per_block=32
 *     op_pct=12 channels=4 read_us=20 program_us=100 erase_us=1000 gc_low=2
 *     idle_ms=10 bg_blocks_per_s=200 bg_free_pct=50 seed=1]
 *
 * The model, its parameters and the formulas the tests check are in tests/ftl/README.md.
 * Data lives in memory at its logical offset; the mapping decides only where time is
 * spent and what garbage collection costs. Every 20 ms a thread replaces `stats` (one
 * line of JSON, the drive's ground truth: pages written by the host and copied by GC,
 * erases, free blocks) and appends a line to `stats`.series (time series every 100 ms).
 * API: nbdkit-plugin(3), NBDKIT_API_VERSION 2. */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL
#define UNMAPPED UINT32_MAX
#define MAX_CHANNELS 64

enum block_state { FREE, ACTIVE, FULL };

/* Parameters. */
static int64_t size;
static uint64_t page = 4096, ppb = 32, op_pct = 12, channels = 4;
static uint64_t read_ns = 20000, program_ns = 100000, erase_ns = 1000000;
static uint64_t gc_low = 2, idle_ns = 10000000, bg_per_s = 200, bg_free_pct = 50;
static uint64_t seed = 1;
static char *stats_path;

/* State, under `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *data;
static uint64_t lpages, blocks;
static uint32_t *l2p;          /* logical page -> physical page, or UNMAPPED */
static uint32_t *p2l;          /* physical page -> logical page, or UNMAPPED */
static uint32_t *valid;        /* valid pages per block */
static uint8_t *state;         /* enum block_state per block */
static uint64_t active[MAX_CHANNELS]; /* each channel's open block */
static uint64_t fill[MAX_CHANNELS];   /* pages programmed in it */
static uint64_t busy_until[MAX_CHANNELS]; /* ns, CLOCK_MONOTONIC */
static uint64_t next_channel, last_io_ns, start_ns, rng, inflight;
static uint64_t host_written, host_written_done, host_read, copied, erases, trimmed, fg_gc, bg_gc, mapped;
static int stats_fd = -1, series_fd = -1;
static pthread_t bg_thread;
static volatile int stopping;

static uint64_t now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until (uint64_t t)
{
  struct timespec ts = { t / 1000000000, t % 1000000000 };
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

static uint64_t next_rand (void)  /* splitmix64 */
{
  uint64_t z = (rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static int parse_u64 (const char *key, const char *value, uint64_t *out, uint64_t scale)
{
  char *end;
  errno = 0;
  unsigned long long v = strtoull (value, &end, 10);
  if (errno || end == value || *end) {
    nbdkit_error ("ftl: %s=%s is not a whole number", key, value);
    return -1;
  }
  *out = v * scale;
  return 0;
}

static int ftl_config (const char *key, const char *value)
{
  if (strcmp (key, "size") == 0)
    return (size = nbdkit_parse_size (value)) > 0 ? 0 : -1;
  if (strcmp (key, "page") == 0) {
    int64_t p = nbdkit_parse_size (value);
    page = p > 0 ? (uint64_t) p : 0;
    return p > 0 ? 0 : -1;
  }
  if (strcmp (key, "stats") == 0)
    return (stats_path = strdup (value)) ? 0 : -1;
  struct { const char *k; uint64_t *v; uint64_t scale; } keys[] = {
    { "pages_per_block", &ppb, 1 }, { "op_pct", &op_pct, 1 },
    { "channels", &channels, 1 }, { "read_us", &read_ns, 1000 },
    { "program_us", &program_ns, 1000 }, { "erase_us", &erase_ns, 1000 },
    { "gc_low", &gc_low, 1 }, { "idle_ms", &idle_ns, 1000000 },
    { "bg_blocks_per_s", &bg_per_s, 1 }, { "bg_free_pct", &bg_free_pct, 1 },
    { "seed", &seed, 1 },
  };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strcmp (key, keys[i].k) == 0)
      return parse_u64 (key, value, keys[i].v, keys[i].scale);
  nbdkit_error ("ftl: unknown parameter %s", key);
  return -1;
}

/* Free blocks of channel c (blocks b with b % channels == c). */
static uint64_t free_in (uint64_t c)
{
  uint64_t n = 0;
  for (uint64_t b = c; b < blocks; b += channels)
    n += state[b] == FREE;
  return n;
}

static uint64_t free_total (void)
{
  uint64_t n = 0;
  for (uint64_t b = 0; b < blocks; b++)
    n += state[b] == FREE;
  return n;
}

/* Opens a free block of channel c as its write point; charges nothing (erased already). */
static int open_block (uint64_t c)
{
  uint64_t pick = UINT64_MAX, n = 0;
  for (uint64_t b = c; b < blocks; b += channels)
    if (state[b] == FREE && next_rand () % ++n == 0)  /* a seeded choice among free */
      pick = b;
  if (pick == UINT64_MAX)
    return -1;
  state[pick] = ACTIVE;
  active[c] = pick;
  fill[c] = 0;
  return 0;
}

/* Channel c is busy for `ns` more, from when it is next free (or now). */
static uint64_t charge (uint64_t c, uint64_t ns, uint64_t now)
{
  uint64_t start = busy_until[c] > now ? busy_until[c] : now;
  busy_until[c] = start + ns;
  return busy_until[c];
}

static int gc_channel (uint64_t c, uint64_t now, uint64_t *done, int background);

/* Programs logical page lp at channel c's write point (opening a block, collecting
 * garbage first when the channel is down to gc_low free blocks). */
static int program (uint64_t c, uint64_t lp, uint64_t now, uint64_t *done, int is_copy)
{
  if (fill[c] == ppb) {
    /* The filled block may already have been collected (a GC victim) and be free. */
    if (state[active[c]] == ACTIVE)
      state[active[c]] = FULL;
    if (!is_copy && free_in (c) <= gc_low && gc_channel (c, now, done, 0) == -1)
      return -1;
    /* Collection's copies may have opened the next block already, and filled it. */
    if (fill[c] == ppb) {
      if (state[active[c]] == ACTIVE)
        state[active[c]] = FULL;
      if (open_block (c) == -1) {
        nbdkit_error ("ftl: channel %" PRIu64 " has no free block", c);
        return -1;
      }
    }
  }
  if (l2p[lp] != UNMAPPED) {
    uint32_t old = l2p[lp];
    valid[old / ppb]--;
    p2l[old] = UNMAPPED;
  }
  else
    mapped++;
  uint64_t pp = active[c] * ppb + fill[c]++;
  l2p[lp] = pp;
  p2l[pp] = lp;
  valid[active[c]]++;
  uint64_t t = charge (c, program_ns, now);
  if (t > *done)
    *done = t;
  return 0;
}

/* Greedy garbage collection on channel c: while it has at most gc_low free blocks (in
 * the background: fewer than bg_free_pct of its blocks, one block per call), erases the
 * full block with the fewest valid pages after copying them (a read and a program
 * each). Fails when no full block has an invalid page (nothing to gain). */
static int gc_channel (uint64_t c, uint64_t now, uint64_t *done, int background)
{
  /* The channel's share of the spare blocks (physical beyond logical). */
  uint64_t spare = (blocks - (lpages + ppb - 1) / ppb) / channels;
  uint64_t bg_target = spare * bg_free_pct / 100;
  uint64_t target = background ? (bg_target > gc_low + 1 ? bg_target : gc_low + 1)
                               : gc_low + 1;
  int rounds = 0;
  while (free_in (c) < target || (!background && free_in (c) <= gc_low)) {
    uint64_t victim = UINT64_MAX;
    for (uint64_t b = c; b < blocks; b += channels)
      if (state[b] == FULL && (victim == UINT64_MAX || valid[b] < valid[victim]))
        victim = b;
    if (victim == UINT64_MAX || valid[victim] == ppb) {
      if (background)
        return 0;
      uint64_t nf = 0, na = 0, nv = 0;
      for (uint64_t b = c; b < blocks; b += channels)
        nf += state[b] == FULL, na += state[b] == ACTIVE, nv += valid[b];
      nbdkit_error ("ftl: channel %" PRIu64 ": no block to reclaim (%" PRIu64 " full, %"
                    PRIu64 " open, %" PRIu64 " free, %" PRIu64 " valid pages)", c, nf, na,
                    free_in (c), nv);
      return -1;
    }
    for (uint64_t i = 0; i < ppb; i++) {
      uint32_t lp = p2l[victim * ppb + i];
      if (lp == UNMAPPED)
        continue;
      charge (c, read_ns, now);
      if (program (c, lp, now, done, 1) == -1)
        return -1;
      copied++;
    }
    state[victim] = FREE;
    erases++;
    uint64_t t = charge (c, erase_ns, now);
    if (t > *done)
      *done = t;
    if (background) {
      bg_gc++;
      return 1;
    }
    fg_gc++;
    if (++rounds > 1000)
      return -1;
  }
  return 0;
}

/* The counters as one line of JSON into text (under `lock`); its length, 0 if it did not
 * fit. */
static int format_stats (uint64_t now, char *text, size_t size)
{
  int len = snprintf (text, size,
    "{\"t_ms\":%" PRIu64 ",\"host_pages_written\":%" PRIu64 ",\"host_pages_read\":%" PRIu64
    ",\"pages_copied\":%" PRIu64 ",\"erases\":%" PRIu64 ",\"trimmed_pages\":%" PRIu64
    ",\"foreground_gc\":%" PRIu64 ",\"background_gc\":%" PRIu64 ",\"free_blocks\":%" PRIu64
    ",\"blocks\":%" PRIu64 ",\"pages_per_block\":%" PRIu64 ",\"logical_pages\":%" PRIu64
    ",\"channels\":%" PRIu64 ",\"mapped_pages\":%" PRIu64
    ",\"host_pages_written_done\":%" PRIu64 "}\n",
    (now - start_ns) / 1000000, host_written, host_read, copied, erases, trimmed, fg_gc,
    bg_gc, free_total (), blocks, ppb, lpages, channels, mapped, host_written_done);
  return len > 0 && (size_t) len < size ? len : 0;
}

/* Publishes a line of format_stats: `stats` replaced, and (series) appended to
 * `stats`.series. File I/O, so never under `lock`: on a disk busy with other work a
 * rename can wait for the journal for a tenth of a second, and every request would wait
 * with it. */
static void publish_stats (const char *text, int len, int series)
{
  if (len == 0)
    return;
  /* Written to a new file renamed over the old: a reader sees one whole line. */
  char tmp[4096];
  snprintf (tmp, sizeof tmp, "%s.tmp", stats_path);
  int fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    int ok = write (fd, text, len) == len;
    close (fd);
    if (ok)
      rename (tmp, stats_path);
  }
  if (series)
    (void) !write (series_fd, text, len);
}

static void write_stats (uint64_t now, int series)
{
  char text[512];
  publish_stats (text, format_stats (now, text, sizeof text), series);
}

/* Every 1 ms: after idle_ms with no request outstanding, reclaims blocks at bg_blocks_per_s on the
 * channel with the fewest free; every 20 ms the stats, every 100 ms a series line. */
static void *background (void *arg)
{
  uint64_t last_stats = 0, last_series = 0, tokens_at = now_ns ();
  double tokens = 0;
  while (!stopping) {
    sleep_until (now_ns () + 1000000);
    pthread_mutex_lock (&lock);
    uint64_t now = now_ns ();
    tokens += (double) (now - tokens_at) * bg_per_s / 1e9;
    tokens_at = now;
    int idle = inflight == 0 && now - last_io_ns > idle_ns;
    if (!idle && tokens > 1)
      tokens = 1;  /* the rate starts when idleness does */
    if (idle && tokens >= 1) {
      uint64_t c = 0, least = UINT64_MAX, done = 0;
      for (uint64_t i = 0; i < channels; i++)
        if (free_in (i) < least)
          least = free_in (i), c = i;
      if (gc_channel (c, now, &done, 1) == 1)
        tokens -= 1;
    }
    char text[512];
    int len = 0, series = 0;
    if (now - last_stats >= 20000000) {
      series = now - last_series >= 100000000;
      len = format_stats (now, text, sizeof text);
      last_stats = now;
      if (series)
        last_series = now;
    }
    pthread_mutex_unlock (&lock);
    if (len)
      publish_stats (text, len, series);
  }
  return NULL;
}

static int ftl_get_ready (void)
{
  if (size <= 0 || stats_path == NULL || page == 0 || ppb == 0 || channels == 0 ||
      channels > MAX_CHANNELS || size % page) {
    nbdkit_error ("ftl: size= (a multiple of page=) and stats= are required; "
                  "channels 1..%d", MAX_CHANNELS);
    return -1;
  }
  lpages = size / page;
  uint64_t physical = lpages + lpages * op_pct / 100;
  blocks = (physical + ppb - 1) / ppb;
  blocks += (channels - blocks % channels) % channels;  /* whole stripes */
  if (blocks / channels < gc_low + 3) {
    nbdkit_error ("ftl: %" PRIu64 " blocks per channel: too few for gc_low=%" PRIu64,
                  blocks / channels, gc_low);
    return -1;
  }
  data = calloc (1, size);
  l2p = malloc (lpages * sizeof *l2p);
  p2l = malloc (blocks * ppb * sizeof *p2l);
  valid = calloc (blocks, sizeof *valid);
  state = calloc (blocks, 1);
  if (!data || !l2p || !p2l || !valid || !state) {
    nbdkit_error ("ftl: out of memory");
    return -1;
  }
  memset (l2p, 0xff, lpages * sizeof *l2p);
  memset (p2l, 0xff, blocks * ppb * sizeof *p2l);
  rng = seed;
  for (uint64_t c = 0; c < channels; c++)
    if (open_block (c) == -1)
      return -1;
  char series_path[4096];
  snprintf (series_path, sizeof series_path, "%s.series", stats_path);
  stats_fd = open (stats_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);  /* can we write? */
  series_fd = open (series_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (stats_fd < 0 || series_fd < 0) {
    nbdkit_error ("ftl: %s: %m", stats_path);
    return -1;
  }
  start_ns = last_io_ns = now_ns ();
  write_stats (start_ns, 1);
  return 0;
}

static int ftl_after_fork (void)
{
  errno = pthread_create (&bg_thread, NULL, background, NULL);
  if (errno) {
    nbdkit_error ("ftl: background thread: %m");
    return -1;
  }
  return 0;
}

static void ftl_unload (void)
{
  stopping = 1;
  if (stats_fd >= 0) {
    pthread_join (bg_thread, NULL);
    write_stats (now_ns (), 1);
    close (stats_fd);
    close (series_fd);
  }
  free (data); free (l2p); free (p2l); free (valid); free (state); free (stats_path);
}

static void *ftl_open (int readonly) { return NBDKIT_HANDLE_NOT_NEEDED; }
static int64_t ftl_get_size (void *handle) { return size; }
static int ftl_can_multi_conn (void *handle) { return 1; }
static int ftl_can_trim (void *handle) { return 1; }
static int ftl_flush (void *handle, uint32_t flags) { return 0; }

/* A request has been served (`written` of its pages programmed): the drive is idle from
 * when none is outstanding. */
static void end_request (uint64_t written)
{
  pthread_mutex_lock (&lock);
  inflight--;
  host_written_done += written;
  last_io_ns = now_ns ();
  pthread_mutex_unlock (&lock);
}

static int ftl_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
                      uint32_t flags)
{
  uint64_t done = 0;
  if (count == 0)
    return 0;
  pthread_mutex_lock (&lock);
  uint64_t now = last_io_ns = now_ns ();
  inflight++;
  for (uint64_t lp = offset / page; lp <= (offset + count - 1) / page; lp++) {
    host_read++;
    if (l2p[lp] != UNMAPPED) {  /* an unmapped page reads as zeros without the media */
      uint64_t t = charge (l2p[lp] / ppb % channels, read_ns, now);
      done = t > done ? t : done;
    }
  }
  memcpy (buf, data + offset, count);
  pthread_mutex_unlock (&lock);
  sleep_until (done);
  end_request (0);
  return 0;
}

static int ftl_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
                       uint32_t flags)
{
  uint64_t done = 0, written = 0;
  int r = 0;
  if (count == 0)
    return 0;
  pthread_mutex_lock (&lock);
  uint64_t now = last_io_ns = now_ns ();
  inflight++;
  memcpy (data + offset, buf, count);
  for (uint64_t lp = offset / page; lp <= (offset + count - 1) / page && r == 0; lp++) {
    uint64_t c = next_channel++ % channels;  /* host writes stripe over the channels */
    r = program (c, lp, now, &done, 0);
    host_written += r == 0;
    written += r == 0;
  }
  pthread_mutex_unlock (&lock);
  sleep_until (done);
  end_request (written);
  if (r == -1)
    errno = ENOSPC;
  return r;
}

/* TRIM: whole pages in the range are unmapped (their physical pages become invalid, so
 * collecting their blocks copies nothing) and read as zeros; partial pages are zeroed. */
static int ftl_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  pthread_mutex_lock (&lock);
  last_io_ns = now_ns ();
  memset (data + offset, 0, count);
  uint64_t first = (offset + page - 1) / page, end = (offset + count) / page;
  for (uint64_t lp = first; lp < end; lp++)
    if (l2p[lp] != UNMAPPED) {
      valid[l2p[lp] / ppb]--;
      p2l[l2p[lp]] = UNMAPPED;
      l2p[lp] = UNMAPPED;
      trimmed++;
      mapped--;
    }
  pthread_mutex_unlock (&lock);
  return 0;
}

static int ftl_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  return ftl_trim (handle, count, offset, flags);
}

static struct nbdkit_plugin plugin = {
  .name = "ftl",
  .longname = "iogate test SSD: a simulated flash translation layer",
  .config = ftl_config,
  .config_help = "size=<SIZE> stats=<FILE> [page= pages_per_block= op_pct= channels= "
                 "read_us= program_us= erase_us= gc_low= idle_ms= bg_blocks_per_s= "
                 "bg_free_pct= seed=]",
  .get_ready = ftl_get_ready,
  .after_fork = ftl_after_fork,
  .unload = ftl_unload,
  .open = ftl_open,
  .get_size = ftl_get_size,
  .can_multi_conn = ftl_can_multi_conn,
  .can_trim = ftl_can_trim,
  .flush = ftl_flush,
  .pread = ftl_pread,
  .pwrite = ftl_pwrite,
  .trim = ftl_trim,
  .zero = ftl_zero,
};

NBDKIT_REGISTER_PLUGIN (plugin)
