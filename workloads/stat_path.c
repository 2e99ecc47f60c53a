/* stat_path: stat(2) of one tmpfs file from every thread, following the kernel's path access by access (seed
 * 004: will-it-scale's stat2, "Same file stat" on /tmp/willitscale.XXXXXX, 20-way on tmpfs). The functions are
 * those of Linux 6.12 (fs/stat.c, fs/namei.c, fs/dcache.c, lib/lockref.c, mm/shmem.c); the objects are in
 * common/vfs.h. The layouts: `shared`, every dentry as 6.1 .. 6.7 had it (d_lockref at 88, sharing cache line 1
 * with the tail of d_iname, which the name compare of every lookup reads); `pre611`, as 6.8 .. 6.10 had it,
 * just before the 6.11 reorder (seed 004's "before": d_lockref at 96, on the same line 1 with the tail of a
 * 40-byte d_iname); `split`, after the reorder (6.11 on: d_lockref at 128, on a line of its own). Every layout
 * is 192 bytes and every dentry starts a cache line, as in the kernel's slab. --files own is stat1 ("Separate
 * file stat"), the control without sharing.
 *
 * The intruder is a transient holder of the file's d_lock, seed 004's trigger of the collapse. The seed does
 * not know who took the lock ("ls /tmp" made it likely); this is that holder as an abstraction, not
 * the listing's own sequence (tmpfs: offset_readdir, which holds the *directory's* d_lock and takes the file's only around
 * dget_dlock). --intruder-holds N stops it after N holds: one transient holder, after which a policy either
 * recovers or stays collapsed. */
#include "common/vfs.h"

static const char testcase_description[] = "stat(2) of one tmpfs file from every thread, access by access as Linux 6.12 walks the path";

static const char *layouts[] = {[KDENTRY_SHARED] = "shared", [KDENTRY_PRE611] = "pre611", [KDENTRY_SPLIT] = "split", NULL};
static const char *files_choices[] = {"same", "own", NULL};
#define TESTCASE_FLAGS(X)                                                                                            \
  X(policy, "policy", "lockref update policy", lockref_policies, "retry100")                                         \
  X(layout, "layout", "the dentries of 6.1-6.7 (shared), of 6.8-6.10 (pre611: before the 6.11 reorder) or of 6.11 on (split)", \
    layouts, "shared")                                                                                               \
  X(files, "files", "one file for all threads, or one each", files_choices, "same")                                  \
  LOCKREF_TUNING_FLAGS(X)                                                                                            \
  X(intruder_period_us, "intruder-period-us", "an intruder takes the file's d_lock every P microseconds (0: no intruder)", NULL, "0") \
  X(intruder_hold_ns, "intruder-hold-ns", "how long the intruder holds the lock", NULL, "2000")                      \
  X(intruder_holds, "intruder-holds", "how many times the intruder takes the lock (0: every period until the end)", NULL, "0")

static const char path_name[] = "/tmp/willitscale.XXXXXX";
static const unsigned char *file_name = (const unsigned char *)path_name + 5;

/* The objects of the walk: "/" (rootfs), "tmp" in it (a mount point), the tmpfs mounted there and its
 * root, the file(s) in it, and their inodes. The dentries are slots seen in the chosen layout (SLOT):
 * each starts a cache line, at the same address in every layout. */
static union kdentry_slot dentry_slots[3 + MAX_THREADS];
static struct dentry root, tmp, tmpfs_root, files[MAX_THREADS];
static const size_t dentry_size = sizeof(union kdentry_slot);
static struct inode root_inode;
static struct shmem_inode tmpfs_root_inode, file_inodes[MAX_THREADS];
static struct mount tmpfs_mount;
static struct { unsigned seq; struct dentry *root; } __aligned_line fs_struct;   /* current->fs: set_root */
static unsigned mount_lock __aligned_line;                                       /* the mount_lock seqcount */
static unsigned rename_lock __aligned_line;                                      /* the rename_lock seqcount */
/* dentry_hashtable: a bucket per dentry, each on its own line: 0 "/", 1 "tmp", 2 the tmpfs root, 3 + i file i */
static struct { struct hlist_bl_node *first; } __aligned_line buckets[3 + MAX_THREADS];
static struct { uint32_t s_dev; unsigned long s_flags; } __aligned_line tmpfs_sb;

/* Each thread's own memory: the getname copy, the per-cpu mount count, the user's struct stat. */
static struct {
  char name[64];
  int64_t mnt_count;
  struct { uint64_t dev, ino, nlink; uint32_t mode, uid, gid, pad; uint64_t rdev; int64_t size, blksize, blocks;
           int64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns; } st;
} __attribute__((aligned(4096))) mine[MAX_THREADS];

static int own_files;
static enum kdentry_layout layout;
#define SLOT(i) kdentry_view(layout, &dentry_slots[i])
static struct lockref_tuning tuning;
static struct lockref_stats stats[MAX_THREADS];
BENCH_TESTCASE("stat_path", "stat calls", TESTCASE_FLAGS)
static uint64_t intruder_period_ns, intruder_hold_ns, intruder_max_holds, intruder_holds;
static volatile int stop_intruder;
static uint64_t walk_failures[MAX_THREADS][8] __aligned_line;

static int nfiles(void) { return own_files ? run.threads : 1; }   /* one file, or one per thread */

/* One stat(2): vfs_fstatat -> vfs_statx -> filename_lookup -> path_lookupat, vfs_statx_path, path_put,
 * cp_new_stat. Returns 0, or -1 if the RCU walk failed (it never should: nothing renames). */
static int do_stat(int id, struct lockref_stats *st) {
  struct dentry *file = &files[own_files ? id : 0];
  /* getname -> strncpy_from_user: the path into the thread's names_cache buffer (private) */
  memcpy(mine[id].name, path_name, sizeof path_name);
  if (own_files) mine[id].name[sizeof path_name - 2] = (char)('A' + id % 26);

  /* path_init (LOOKUP_RCU): the mount and rename sequence counts, then set_root reads current->fs
   * under fs->seq; nd->path = root */
  struct nameidata nd;
  unsigned m_seq = READ_ONCE(mount_lock);                         /* nd->m_seq = __read_seqcount_begin(&mount_lock) */
  (void)READ_ONCE(rename_lock);                                    /* nd->r_seq = __read_seqcount_begin(&rename_lock) */
  (void)READ_ONCE(fs_struct.seq);                                  /* set_root: read_seqcount_begin(&fs->seq) */
  nd.path = READ_ONCE(fs_struct.root);
  nd.inode = READ_ONCE(*nd.path->d_inode);                        /* nd->inode = nd->path.dentry->d_inode */
  nd.seq = READ_ONCE(*nd.path->d_seq);                            /* nd->seq = __read_seqcount_begin(&d_seq) */

  /* link_path_walk: "tmp" */
  const char *p = next_component(&nd, mine[id].name);
  if (may_lookup(nd.inode)) return -1;                            /* may_lookup */
  if (walk_component(&nd, &buckets[1].first, &tmp, &tmpfs_mount, &mount_lock)) return -1;   /* walk_component */
  if (!(READ_ONCE(*nd.path->d_flags) & DCACHE_DIRECTORY_TYPE)) return -1;   /* link_path_walk: d_can_lookup */
  /* link_path_walk: the last component, then lookup_last -> walk_component */
  next_component(&nd, p);
  if (may_lookup(nd.inode)) return -1;
  if (walk_component(&nd, &buckets[3 + (own_files ? id : 0)].first, file, &tmpfs_mount, &mount_lock)) return -1;

  /* complete_walk -> try_to_unlazy -> legitimize_path */
  mine[id].mnt_count++;                                            /* __legitimize_mnt: mnt_add_count, per cpu */
  if (READ_ONCE(mount_lock) != m_seq) return -1;                  /* __legitimize_mnt: read_seqretry(&mount_lock) */
  lockref_get(file->d_lockref, &tuning, st);                      /* lockref_get_not_dead(&dentry->d_lockref) */
  /* legitimize_path: read_seqcount_retry(&dentry->d_seq, seq); try_to_unlazy: BUG_ON(nd->inode !=
   * parent->d_inode), its `parent` being nd->path.dentry: the file. A failure drops the reference. */
  if (READ_ONCE(*file->d_seq) != nd.seq || READ_ONCE(*file->d_inode) != (void *)nd.inode) {
    lockref_put(file->d_lockref, &tuning, st);
    return -1;
  }

  /* vfs_statx_path -> vfs_getattr -> vfs_getattr_nosec -> shmem_getattr -> generic_fillattr */
  struct inode *inode = READ_ONCE(*file->d_inode);                /* vfs_getattr_nosec: d_backing_inode */
  (void)READ_ONCE(tmpfs_sb.s_flags);                               /* vfs_getattr_nosec: IS_NOATIME etc. (i_sb->s_flags) */
  (void)READ_ONCE(inode->i_flags);                                 /* vfs_getattr_nosec: i_flags (S_AUTOMOUNT, ...) */
  (void)READ_ONCE(inode->i_op);                                    /* vfs_getattr_nosec: inode->i_op->getattr */
  inode = READ_ONCE(*file->d_inode);                               /* shmem_getattr: path->dentry->d_inode */
  struct shmem_inode *shmem = (struct shmem_inode *)((char *)inode - offsetof(struct shmem_inode, vfs_inode));   /* SHMEM_I */
  (void)READ_ONCE(inode->i_mapping);                               /* shmem_getattr: inode->i_mapping->nrpages */
  if (READ_ONCE(shmem->info.alloced) - READ_ONCE(shmem->info.swapped) != READ_ONCE(inode->i_data.nrpages)) {
    lockref_put(file->d_lockref, &tuning, st);
    return -1;
  }
  (void)READ_ONCE(shmem->info.fsflags);                            /* shmem_getattr: info->fsflags */
  struct kstat_view { uint64_t dev, ino, nlink, rdev, blocks; uint32_t mode, uid, gid; int64_t size, a, m, c; } k;
  k.dev = READ_ONCE(tmpfs_sb.s_dev);                               /* generic_fillattr: inode->i_sb->s_dev */
  k.ino = READ_ONCE(inode->i_ino);
  k.mode = READ_ONCE(inode->i_mode);
  k.nlink = READ_ONCE(inode->i_nlink);
  k.uid = READ_ONCE(inode->i_uid);
  k.gid = READ_ONCE(inode->i_gid);
  k.rdev = READ_ONCE(inode->i_rdev);
  k.size = READ_ONCE(inode->i_size);                               /* i_size_read */
  k.a = READ_ONCE(inode->i_atime_sec);
  k.m = READ_ONCE(inode->i_mtime_sec);
  k.c = READ_ONCE(inode->i_ctime_sec);
  (void)READ_ONCE(inode->i_blkbits);                               /* i_blocksize */
  k.blocks = READ_ONCE(inode->i_blocks);
  (void)READ_ONCE(tmpfs_mount.mnt_root);                           /* vfs_statx_path: path_mounted */
  (void)READ_ONCE(tmpfs_mount.mnt_id);                             /* vfs_statx_path: real_mount(path->mnt)->mnt_id */

  /* path_put -> dput -> fast_dput -> lockref_put_return (locked: spin_lock(&d_lock), count--); mntput */
  lockref_put(file->d_lockref, &tuning, st);
  mine[id].mnt_count--;

  /* cp_new_stat -> copy_to_user: the user's struct stat (private) */
  mine[id].st.dev = k.dev; mine[id].st.ino = k.ino; mine[id].st.nlink = k.nlink; mine[id].st.mode = k.mode;
  mine[id].st.uid = k.uid; mine[id].st.gid = k.gid; mine[id].st.rdev = k.rdev; mine[id].st.size = k.size;
  mine[id].st.blksize = 4096; mine[id].st.blocks = k.blocks;
  mine[id].st.atime = k.a; mine[id].st.mtime = k.m; mine[id].st.ctime = k.c;
  return 0;
}

static void testcase(int id) {
  struct lockref_stats *st = &stats[id];
  for (struct bench_loop l = bench_loop(&run, id); bench_next_lockref(&l, st);) {
    uint64_t locked = st->locked_ops;
    if (do_stat(id, st)) walk_failures[id][0]++;
    st->ops++;
    bench_count_aux(&l, st->locked_ops - locked);
  }
}

static void intruder(int id) {   /* a transient holder of the file's d_lock */
  (void)id;
  intruder_holds = intruder_holds_lock(files[0].d_lockref, tuning.spinlock, intruder_period_ns, intruder_hold_ns, intruder_max_holds,
                                       &stop_intruder);
}

static int testcase_prepare(void) {
  aux_name = "locked_ops";
  tuning = lockref_tuning_from_flags();
  own_files = flag_is(files, "own");
  intruder_period_ns = flag_num(intruder_period_us) * 1000;
  intruder_hold_ns = flag_num(intruder_hold_ns);
  intruder_max_holds = flag_num(intruder_holds);
  if (own_files && intruder_period_ns) usage("the intruder needs --files same");
  while (strcmp(layouts[layout], flag_text(layout))) layout++;   /* parse_flags checked it is one of them */

  root_inode = (struct inode){.i_mode = 040755, .i_ino = 1, .i_nlink = 2};
  tmpfs_root_inode.vfs_inode = (struct inode){.i_mode = 041777, .i_ino = 1, .i_nlink = 2};
  root = dentry_init(SLOT(0), "/", NULL, &buckets[0].first, &root_inode, DCACHE_DIRECTORY_TYPE, NULL);
  tmp = dentry_init(SLOT(1), "tmp", &root, &buckets[1].first, NULL, DCACHE_DIRECTORY_TYPE | DCACHE_MOUNTED, NULL);
  tmpfs_root = dentry_init(SLOT(2), "/", NULL, &buckets[2].first, &tmpfs_root_inode.vfs_inode, DCACHE_DIRECTORY_TYPE, &tmpfs_sb);
  tmpfs_mount = (struct mount){.mnt_parent = &tmpfs_mount, .mnt_mountpoint = tmp.object, .mnt_root = tmpfs_root.object,
                               .root_view = &tmpfs_root};
  fs_struct.root = &root;
  tmpfs_sb.s_dev = 0x2a;
  for (int i = 0; i < nfiles(); i++) {
    char name[32];
    memcpy(name, file_name, strlen((const char *)file_name) + 1);
    if (own_files) name[strlen(name) - 1] = (char)('A' + i % 26);
    file_inodes[i].vfs_inode = (struct inode){.i_mode = 0100600, .i_ino = 100 + i, .i_nlink = 1, .i_blkbits = 12};
    /* each file in a bucket of its own, so with --files own no thread reads another's dentry */
    files[i] = dentry_init(SLOT(3 + i), name, &tmpfs_root, &buckets[3 + i].first, &file_inodes[i].vfs_inode, DCACHE_REGULAR_TYPE, &tmpfs_sb);
  }
  touch_object(mine, sizeof mine[0] * run.threads);
  if (intruder_period_ns) { run.intruder = intruder; run.stop_intruder = &stop_intruder; }
  return 0;
}

static int testcase_report(void) {
  uint64_t failures = 0;
  int ok = 1;
  for (int i = 0; i < run.threads; i++) failures += walk_failures[i][0];
  for (int i = 0; i < nfiles(); i++) ok &= files[i].d_lockref->count == 1;
  ok &= failures == 0;
  json_lockref_stats(stats, run.threads);
  json_u64("intruder_holds", intruder_holds);
  json_u64("walk_failures", failures);
  json_key("final_count"); printf("%d", files[0].d_lockref->count);
  json_u64("expected_count", 1);
  json_str("invariants", ok ? "ok" : "violated");
  json_layout_begin(flag_text(layout));
  json_kdentry("file", &files[0], dentry_size);
  json_kdentry("tmpfs_root", &tmpfs_root, dentry_size);
  json_kdentry("tmp", &tmp, dentry_size);
  json_kdentry("root", &root, dentry_size);
  json_object_begin("file_inode", &file_inodes[0], sizeof file_inodes[0]);
  json_object_end();
  json_object_begin("hash_buckets", buckets, sizeof buckets[0] * (3 + nfiles()));
  json_object_end();
  json_object_begin("per_thread", mine, sizeof mine[0] * run.threads);
  json_object_end();
  json_layout_end();
  return ok ? 0 : 1;
}
