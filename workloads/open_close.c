/* open_close: every thread opens and closes a file of its own in one shared directory, following the
 * kernel's path access by access (seed 000: AIM7's short workload, ~78% of its time spinning on d_lock
 * in dget_parent and dput). Each open and each close notifies the file's parent the way fsnotify_parent
 * does for a watched directory: dget_parent(file) then dput(parent), so the shared directory's lockref
 * is taken and dropped twice per open+close while each file's own lockref stays on its thread.
 * Which 3.10 caller of dget_parent the AIM7 profile hit is not in the seed; fsnotify_parent is the one
 * on every open and close (docs/workloads.md). Functions are those of Linux 6.12 (fs/open.c, fs/namei.c,
 * fs/dcache.c, fs/file_table.c, include/linux/fsnotify.h, lib/lockref.c); objects in common/vfs.h. Of the
 * policies, `locked` is 3.10 before seed 000's patch and `cmpxchg` the patch. */
#include "common/vfs.h"

static const char testcase_description[] = "every thread opens and closes a file of its own in one watched directory, as Linux 6.12 does it";

static const char *layouts[] = {"shared", "split", NULL};
#define TESTCASE_FLAGS(X)                                                                                     \
  X(policy, "policy", "lockref update policy", lockref_policies, "locked")                                    \
  X(layout, "layout", "the dentries before (shared) or after (split) the 6.11 reorder", layouts, "shared")   \
  LOCKREF_TUNING_FLAGS(X)

/* "/", the shared directory "/aim" in it, and each thread's file "/aim/fN". */
static struct dentry_shared shared_dentries[2 + MAX_THREADS];
static struct dentry_split split_dentries[2 + MAX_THREADS];
static struct dentry root, dir, files[MAX_THREADS];
static struct inode root_inode, dir_inode, file_inodes[MAX_THREADS];
static struct mount root_mount;
static struct { unsigned seq; struct dentry *root; } __aligned_line fs_struct;   /* current->fs: set_root */
static unsigned mount_lock __aligned_line, rename_lock __aligned_line;
static struct { int s_wb_err; } __aligned_line sb;   /* the file system's super_block */
static struct { struct hlist_bl_node *first; } __aligned_line buckets[2 + MAX_THREADS];   /* 0 "/", 1 "aim", 2 + i file i */

/* Each thread's own memory: the getname copy, the per-cpu mount count, its struct file. */
static struct {
  char user_path[32];   /* the open(2) argument */
  char name[32];
  int64_t mnt_count;
  struct { struct dentry *f_path; struct inode *f_inode; uint32_t f_mode, f_flags; int64_t f_count; } file;
} __attribute__((aligned(4096))) mine[MAX_THREADS];

static int split_layout;
#define SLOT(i) (split_layout ? DENTRY_OF(&split_dentries[i]) : DENTRY_OF(&shared_dentries[i]))
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
BENCH_TESTCASE("open_close", "open+close pairs", TESTCASE_FLAGS)
static uint64_t failures[MAX_THREADS][8] __aligned_line;

/* dget_parent (fs/dcache.c): optimistic parent reference, checked against a concurrent rename. */
static struct dentry *dget_parent(struct dentry *d, struct lockref_stats *st) {
  unsigned seq = READ_ONCE(*d->d_seq);                             /* raw_seqcount_begin(&dentry->d_seq) */
  void *parent = READ_ONCE(*d->d_parent);                          /* READ_ONCE(dentry->d_parent) */
  if (parent != dir.object) return NULL;
  lockref_get(dir.d_lockref, &tuning, st);                         /* lockref_get_not_zero(&ret->d_lockref) */
  if (READ_ONCE(*d->d_seq) != seq) {                               /* read_seqcount_retry(&dentry->d_seq, seq) */
    lockref_put(dir.d_lockref, &tuning, st);                       /* dput(ret), then the locked way (never here) */
    return NULL;
  }
  return &dir;
}

/* fsnotify_parent (include/linux/fsnotify.h) -> __fsnotify_parent (fs/notify/fsnotify.c) for a parent
 * with a watch: take the parent, read its watch mask, drop the parent (dput -> fast_dput ->
 * lockref_put_return). The watch is assumed not to ask for open/close events, so no event is queued
 * (queuing would write the group's notification list under its lock). */
static int fsnotify_parent(struct dentry *d, struct lockref_stats *st) {
  (void)READ_ONCE(*d->d_flags);                                    /* DCACHE_FSNOTIFY_PARENT_WATCHED */
  struct dentry *parent = dget_parent(d, st);
  if (!parent) return -1;
  struct inode *p_inode = READ_ONCE(*parent->d_inode);             /* __fsnotify_parent: p_inode = parent->d_inode */
  (void)READ_ONCE(p_inode->later.i_fsnotify_mask);                 /* fsnotify_inode_watches_children(p_inode) */
  lockref_put(parent->d_lockref, &tuning, st);                     /* dput(parent) */
  return 0;
}

/* open(2): do_sys_openat2 -> do_filp_open -> path_openat: the RCU walk and complete_walk, do_open ->
 * vfs_open -> do_dentry_open (which takes its own path reference) and fsnotify_open; then
 * terminate_walk drops the walk's reference. A failure drops what it took. */
static int do_open(int id, struct lockref_stats *st) {
  memcpy(mine[id].name, mine[id].user_path, sizeof mine[id].name); /* getname -> strncpy_from_user */
  struct nameidata nd;
  unsigned m_seq = READ_ONCE(mount_lock);                          /* path_init: __read_seqcount_begin(&mount_lock) */
  (void)READ_ONCE(rename_lock);                                     /* path_init: __read_seqcount_begin(&rename_lock) */
  (void)READ_ONCE(fs_struct.seq);                                   /* path_init -> set_root */
  nd.path = READ_ONCE(fs_struct.root);
  nd.inode = READ_ONCE(*nd.path->d_inode);
  nd.seq = READ_ONCE(*nd.path->d_seq);
  const char *p = next_component(&nd, mine[id].name);             /* link_path_walk: "aim" */
  if (may_lookup(nd.inode)) return -1;
  if (walk_component(&nd, &buckets[1].first, &dir, &root_mount, &mount_lock)) return -1;
  if (!(READ_ONCE(*nd.path->d_flags) & DCACHE_DIRECTORY_TYPE)) return -1;   /* link_path_walk: d_can_lookup */
  next_component(&nd, p);                                          /* open_last_lookups -> lookup_fast */
  if (may_lookup(nd.inode)) return -1;
  struct dentry *file = &files[id];
  if (walk_component(&nd, &buckets[2 + id].first, file, &root_mount, &mount_lock)) return -1;
  mine[id].mnt_count++;                                            /* complete_walk -> legitimize_path: mnt */
  if (READ_ONCE(mount_lock) != m_seq) { mine[id].mnt_count--; return -1; }
  lockref_get(file->d_lockref, &tuning, st);                       /* legitimize_path: lockref_get_not_dead */
  /* legitimize_path: read_seqcount_retry(&d_seq); try_to_unlazy: BUG_ON(nd->inode != parent->d_inode),
   * `parent` being nd->path.dentry: the file */
  if (READ_ONCE(*file->d_seq) != nd.seq || READ_ONCE(*file->d_inode) != (void *)nd.inode) {
    lockref_put(file->d_lockref, &tuning, st);                     /* terminate_walk -> path_put */
    mine[id].mnt_count--;
    return -1;
  }
  struct inode *inode = READ_ONCE(*file->d_inode);                 /* do_dentry_open: f->f_inode = inode */
  (void)READ_ONCE(inode->i_mode);                                  /* may_open: i_mode */
  lockref_get(file->d_lockref, &tuning, st);                       /* do_dentry_open: path_get -> dget */
  mine[id].mnt_count++;                                            /* do_dentry_open: path_get -> mntget */
  (void)READ_ONCE(*file->d_sb);                                    /* do_dentry_open: file_sample_sb_err (d_sb) */
  (void)READ_ONCE(sb.s_wb_err);
  (void)READ_ONCE(inode->later.i_fop);                              /* do_dentry_open: fops_get(inode->i_fop) */
  mine[id].file.f_path = file;
  mine[id].file.f_inode = inode;
  mine[id].file.f_count = 1;
  int err = fsnotify_parent(file, st);                             /* vfs_open -> fsnotify_open -> fsnotify_parent */
  lockref_put(file->d_lockref, &tuning, st);                       /* path_openat: terminate_walk -> path_put -> dput */
  mine[id].mnt_count--;                                            /*   and mntput */
  return err;
}

/* close(2): filp_flush, fput -> __fput: fsnotify_close, then dput(dentry), mntput. */
static int do_close(int id, struct lockref_stats *st) {
  struct dentry *file = mine[id].file.f_path;
  mine[id].file.f_count--;
  int err = fsnotify_parent(file, st);                             /* __fput -> fsnotify_close -> fsnotify_parent */
  lockref_put(file->d_lockref, &tuning, st);                       /* __fput -> dput(dentry) */
  mine[id].mnt_count--;                                            /* __fput -> mntput */
  return err;
}

static void testcase(int id) {
  struct lockref_stats *st = &stats[id];
  for (struct bench_loop l = bench_loop(&run, id); bench_next_lockref(&l, st);) {
    uint64_t locked = st->locked_ops;
    if (do_open(id, st)) failures[id][0]++;
    else if (do_close(id, st)) failures[id][0]++;
    st->ops++;
    bench_count_aux(&l, st->locked_ops - locked);
  }
}

static int testcase_prepare(void) {
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags();
  split_layout = flag_is(layout, "split");
  root_inode = (struct inode){.i_mode = 040755, .i_ino = 2, .i_nlink = 3};
  dir_inode = (struct inode){.i_mode = 040777, .i_ino = 3, .i_nlink = 2};
  root = dentry_init(SLOT(0), "/", NULL, &buckets[0].first, &root_inode, DCACHE_DIRECTORY_TYPE, &sb);
  dir = dentry_init(SLOT(1), "aim", &root, &buckets[1].first, &dir_inode, DCACHE_DIRECTORY_TYPE, &sb);
  for (int i = 0; i < run.threads; i++) {
    char name[16];
    snprintf(name, sizeof name, "f%d", i);
    file_inodes[i] = (struct inode){.i_mode = 0100644, .i_ino = 100 + i, .i_nlink = 1};
    files[i] = dentry_init(SLOT(2 + i), name, &dir, &buckets[2 + i].first, &file_inodes[i], DCACHE_REGULAR_TYPE, &sb);
    snprintf(mine[i].user_path, sizeof mine[i].user_path, "/aim/%s", name);
  }
  fs_struct.root = &root;
  touch_object(mine, sizeof mine[0] * run.threads);
  root_mount = (struct mount){.mnt_parent = &root_mount, .mnt_root = root.object, .root_view = &root};
  return 0;
}

static int testcase_report(void) {
  uint64_t failed = 0;
  int ok = dir.d_lockref->count == 1;
  for (int i = 0; i < run.threads; i++) { failed += failures[i][0]; ok &= files[i].d_lockref->count == 1; }
  ok &= failed == 0;
  json_lockref_stats(stats, run.threads);
  json_u64("walk_failures", failed);
  json_key("final_count"); printf("%d", dir.d_lockref->count);
  json_u64("expected_count", 1);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flag_text(layout));
  json_kdentry("parent", &dir, sizeof(struct dentry_shared));
  json_kdentry("root", &root, sizeof(struct dentry_shared));
  json_kdentry("file0", &files[0], sizeof(struct dentry_shared));
  json_object_begin("files", files[0].object, sizeof(struct dentry_shared) * run.threads);
  json_object_end();
  json_object_begin("per_thread", mine, sizeof mine[0] * run.threads);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
