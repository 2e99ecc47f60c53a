/* The VFS objects a path walk touches, laid out as in Linux on x86-64 (no lockdep, no RANDSTRUCT), and
 * the RCU path walk of fs/namei.c over them, access by access. Every read or write of a shared object
 * names the kernel function that makes it. Linux 6.12 source (Debian's linux-source-6.12) is the
 * reference. The dentry comes in three layouts, all 192 bytes: `shared` is 6.1 .. 6.7's (d_lockref at 88,
 * d_child/d_subdirs list_heads, DNAME_INLINE_LEN 32), `pre611` 6.8 .. 6.10's (6.8's hlists of children and
 * DNAME_INLINE_LEN 40, d_lockref at 96: the dentry just before the 6.11 reorder, seed 004's "before"), and
 * `split` the dentry after the reorder (6.11 on, seed 004's "after": d_lockref at 128).
 *
 * What is left out: syscall entry and exit, getname's slab allocation, the LSM hooks (none configured),
 * the mount and fs_struct sequence counts beyond one read each, and everything after the walk that works
 * only on the thread's own memory besides what is written here. All of these are private or read-only
 * and add time, not coherence traffic. */
#ifndef COHTB_VFS_H
#define COHTB_VFS_H

#include <stddef.h>
#include "lockref.h"

struct hlist_bl_node { struct hlist_bl_node *next, **pprev; };
struct list_head { struct list_head *next, *prev; };
struct qstr { uint64_t hash_len; const unsigned char *name; };   /* hash_len: len << 32 | hash */

/* include/linux/dcache.h, 6.1 .. 6.7: DNAME_INLINE_LEN 32 ("192 bytes"), d_lockref at 88, on cache
 * line 1 with the tail of d_iname that __d_lookup_rcu's name compare reads. */
struct dentry_shared {
  uint32_t d_flags;                 /* 0 */
  uint32_t d_seq;                   /* 4 */
  struct hlist_bl_node d_hash;      /* 8 */
  void *d_parent;                   /* 24 */
  struct qstr d_name;               /* 32 */
  void *d_inode;                    /* 48 */
  unsigned char d_iname[32];        /* 56 */
  struct lockref d_lockref;         /* 88 */
  const void *d_op;                 /* 96 */
  void *d_sb;                       /* 104 */
  unsigned long d_time;             /* 112 */
  void *d_fsdata;                   /* 120 */
  struct list_head d_lru;           /* 128 */
  struct list_head d_child;         /* 144 */
  struct list_head d_subdirs;       /* 160 */
  struct hlist_bl_node d_u;         /* 176 */
} __aligned_line;

/* include/linux/dcache.h, 6.8 .. 6.10: Al Viro's "dentry: switch the lists of children to hlist" (6.8)
 * made d_child/d_subdirs (two list_heads) the hlist node d_sib and head d_children (24 bytes, not 32)
 * and DNAME_INLINE_LEN 40 on 64-bit, still 192 bytes. d_lockref right after d_iname, at 96: on cache
 * line 1 with d_iname's tail (64 .. 95), which __d_lookup_rcu's name compare reads, and d_op, d_sb,
 * d_time. The 6.11 reorder (seed 004) moved it from here to 128; the kernel variant of the same name
 * (kernel/patches/dentry-pre611-layout.patch) builds this layout into 6.12. */
struct dentry_pre611 {
  uint32_t d_flags;                 /* 0 */
  uint32_t d_seq;                   /* 4 */
  struct hlist_bl_node d_hash;      /* 8 */
  void *d_parent;                   /* 24 */
  struct qstr d_name;               /* 32 */
  void *d_inode;                    /* 48 */
  unsigned char d_iname[40];        /* 56 */
  struct lockref d_lockref;         /* 96 */
  const void *d_op;                 /* 104 */
  void *d_sb;                       /* 112 */
  unsigned long d_time;             /* 120 */
  void *d_fsdata;                   /* 128 */
  struct list_head d_lru;           /* 136 (a union with d_wait) */
  struct hlist_bl_node d_sib;       /* 152 (struct hlist_node: the same two pointers) */
  void *d_children;                 /* 168 (struct hlist_head) */
  struct hlist_bl_node d_u;         /* 176 */
} __aligned_line;

/* include/linux/dcache.h, 6.11 on: DNAME_INLINE_LEN 40, d_lockref at 128, a line of its own
 * ("keep separate from RCU lookup area if possible!"). */
struct dentry_split {
  uint32_t d_flags;
  uint32_t d_seq;
  struct hlist_bl_node d_hash;
  void *d_parent;
  struct qstr d_name;
  void *d_inode;
  unsigned char d_iname[40];        /* 56 */
  const void *d_op;                 /* 96 */
  void *d_sb;
  unsigned long d_time;
  void *d_fsdata;
  struct lockref d_lockref;         /* 128 */
  struct list_head d_lru;           /* 136 */
  struct hlist_bl_node d_sib;       /* 152 */
  void *d_children;                 /* 168 */
  struct hlist_bl_node d_u;         /* 176 */
} __aligned_line;

/* Every field at the kernel's offset (pahole of the x86-64 builds), and the size. */
#define DENTRY_AT(T, f, off) _Static_assert(offsetof(struct T, f) == (off), #T "." #f " at " #off)
DENTRY_AT(dentry_shared, d_flags, 0);    DENTRY_AT(dentry_shared, d_seq, 4);       DENTRY_AT(dentry_shared, d_hash, 8);
DENTRY_AT(dentry_shared, d_parent, 24);  DENTRY_AT(dentry_shared, d_name, 32);     DENTRY_AT(dentry_shared, d_inode, 48);
DENTRY_AT(dentry_shared, d_iname, 56);   DENTRY_AT(dentry_shared, d_lockref, 88);  DENTRY_AT(dentry_shared, d_op, 96);
DENTRY_AT(dentry_shared, d_sb, 104);     DENTRY_AT(dentry_shared, d_time, 112);    DENTRY_AT(dentry_shared, d_fsdata, 120);
DENTRY_AT(dentry_shared, d_lru, 128);    DENTRY_AT(dentry_shared, d_child, 144);   DENTRY_AT(dentry_shared, d_subdirs, 160);
DENTRY_AT(dentry_shared, d_u, 176);
DENTRY_AT(dentry_pre611, d_flags, 0);    DENTRY_AT(dentry_pre611, d_seq, 4);       DENTRY_AT(dentry_pre611, d_hash, 8);
DENTRY_AT(dentry_pre611, d_parent, 24);  DENTRY_AT(dentry_pre611, d_name, 32);     DENTRY_AT(dentry_pre611, d_inode, 48);
DENTRY_AT(dentry_pre611, d_iname, 56);   DENTRY_AT(dentry_pre611, d_lockref, 96);  DENTRY_AT(dentry_pre611, d_op, 104);
DENTRY_AT(dentry_pre611, d_sb, 112);     DENTRY_AT(dentry_pre611, d_time, 120);    DENTRY_AT(dentry_pre611, d_fsdata, 128);
DENTRY_AT(dentry_pre611, d_lru, 136);    DENTRY_AT(dentry_pre611, d_sib, 152);     DENTRY_AT(dentry_pre611, d_children, 168);
DENTRY_AT(dentry_pre611, d_u, 176);
DENTRY_AT(dentry_split, d_flags, 0);     DENTRY_AT(dentry_split, d_seq, 4);        DENTRY_AT(dentry_split, d_hash, 8);
DENTRY_AT(dentry_split, d_parent, 24);   DENTRY_AT(dentry_split, d_name, 32);      DENTRY_AT(dentry_split, d_inode, 48);
DENTRY_AT(dentry_split, d_iname, 56);    DENTRY_AT(dentry_split, d_op, 96);        DENTRY_AT(dentry_split, d_sb, 104);
DENTRY_AT(dentry_split, d_time, 112);    DENTRY_AT(dentry_split, d_fsdata, 120);   DENTRY_AT(dentry_split, d_lockref, 128);
DENTRY_AT(dentry_split, d_lru, 136);     DENTRY_AT(dentry_split, d_sib, 152);      DENTRY_AT(dentry_split, d_children, 168);
DENTRY_AT(dentry_split, d_u, 176);
#undef DENTRY_AT
_Static_assert(sizeof(struct dentry_shared) == 192 && sizeof(struct dentry_pre611) == 192 && sizeof(struct dentry_split) == 192,
               "192-byte dentries");

/* A dentry in any layout, by its fields. */
struct dentry {
  uint32_t *d_flags, *d_seq;
  struct hlist_bl_node *d_hash;
  void **d_parent;
  struct qstr *d_name;
  void **d_inode;
  unsigned char *d_iname;
  size_t iname_len;
  struct lockref *d_lockref;
  void **d_sb;
  void *object;
};

#define DENTRY_OF(p) ((struct dentry){&(p)->d_flags, &(p)->d_seq, &(p)->d_hash, &(p)->d_parent, &(p)->d_name, \
                                      &(p)->d_inode, (p)->d_iname, sizeof (p)->d_iname, &(p)->d_lockref, &(p)->d_sb, (p)})

/* One dentry's storage, seen in any of the layouts. All three are 192 bytes, three whole lines, and the
 * slot is line-aligned, so in an array every dentry starts a cache line, as in the kernel: dentry_cache
 * aligns its objects to 8 bytes only, but packs them from a page start, and 192 is a multiple of 64, so
 * every 192-byte dentry starts a line (a 184-byte one, the full-system variant hybrid184, would start at
 * any 8-byte offset). A workload that keeps its dentries in an array of slots has them at the same
 * addresses in every layout. */
enum kdentry_layout { KDENTRY_SHARED, KDENTRY_PRE611, KDENTRY_SPLIT };
union kdentry_slot {
  struct dentry_shared shared;
  struct dentry_pre611 pre611;
  struct dentry_split split;
};
_Static_assert(sizeof(union kdentry_slot) == 192 && _Alignof(union kdentry_slot) == 64, "a slot is three whole lines");

static inline struct dentry kdentry_view(enum kdentry_layout layout, union kdentry_slot *slot) {
  switch (layout) {
  case KDENTRY_PRE611: return DENTRY_OF(&slot->pre611);
  case KDENTRY_SPLIT: return DENTRY_OF(&slot->split);
  default: return DENTRY_OF(&slot->shared);
  }
}

#define DCACHE_MOUNTED 0x00010000u     /* d_flags: a mount point (include/linux/dcache.h) */
#define DCACHE_REGULAR_TYPE 0x00400000u
#define DCACHE_DIRECTORY_TYPE 0x00200000u

/* include/linux/fs.h struct inode: its first lines at the kernel's offsets (6.12, x86-64, with
 * CONFIG_SECURITY and POSIX ACLs: the stat data generic_fillattr reads), then, on lines of their own at
 * offsets that are only approximate, the later fields the walk reads. Inodes are read-only here. */
struct inode {
  uint16_t i_mode, i_opflags;       /* 0 */
  uint32_t i_uid, i_gid, i_flags;   /* 4 */
  void *i_acl, *i_default_acl;      /* 16 */
  const void *i_op;                 /* 32 */
  void *i_sb;                       /* 40 */
  void *i_mapping;                  /* 48 */
  void *i_security;                 /* 56 */
  unsigned long i_ino;              /* 64 */
  uint32_t i_nlink, i_rdev;
  int64_t i_size;
  int64_t i_atime_sec, i_mtime_sec, i_ctime_sec;
  uint32_t i_atime_nsec, i_mtime_nsec, i_ctime_nsec, i_generation;
  uint32_t i_lock;
  uint16_t i_bytes;
  uint8_t i_blkbits, i_write_hint;
  uint64_t i_blocks;
  struct { const void *i_fop; uint32_t i_fsnotify_mask; } __aligned_line later;   /* i_fop, i_fsnotify_mask */
  struct { uint64_t nrpages; } __aligned_line i_data;                             /* i_data.nrpages */
} __aligned_line;
_Static_assert(offsetof(struct inode, i_ino) == 64, "struct inode: i_ino at 64");

/* mm/shmem.c struct shmem_inode_info: the tmpfs fields shmem_getattr reads, before the VFS inode
 * (SHMEM_I is container_of). */
struct shmem_inode {
  struct { uint64_t alloced, swapped; uint32_t fsflags; } __aligned_line info;
  struct inode vfs_inode;
} __aligned_line;

/* fs/mount.h struct mount: what __lookup_mnt compares, and the mounted root. */
struct mount {
  struct hlist_bl_node mnt_hash;
  struct mount *mnt_parent;
  void *mnt_mountpoint;              /* the dentry object mounted on */
  void *mnt_root;                    /* mnt.mnt_root: the dentry object of the mounted root */
  int mnt_id;
  struct dentry *root_view;          /* (cohtb's: mnt_root as a dentry view) */
} __aligned_line;

/* The part of struct nameidata (fs/namei.c) the walk keeps: the thread's own, on its stack. */
struct nameidata {
  struct dentry *path;               /* nd->path.dentry */
  struct inode *inode;               /* nd->inode */
  unsigned seq, next_seq;
  struct qstr last;
};

/* hash_name (fs/namei.c): the component's hash and length, computed from the name as the kernel does a
 * word at a time; private work (the name is the thread's own copy from getname). */
static inline uint64_t hash_name(const unsigned char *name, unsigned *len) {
  uint64_t hash = 0;
  unsigned n = 0;
  while (name[n] && name[n] != '/') {
    hash = (hash + name[n]) * 0x9e3779b97f4a7c15ull;
    n++;
  }
  *len = n;
  return ((uint64_t)n << 32) | (uint32_t)(hash >> 32);
}

/* dentry_cmp (fs/dcache.c): READ_ONCE of d_name.name, then the name bytes a word at a time
 * (read_word_at_a_time on the dentry's side). For an inline name this reads d_iname, which for names
 * longer than 8 bytes crosses into cache line 1. */
static inline int dentry_cmp(struct dentry *d, const unsigned char *ct, unsigned len) {
  const unsigned char *cs = READ_ONCE(d->d_name->name);
  for (unsigned i = 0; i < len; i += 8) {
    uint64_t a = 0, b = 0;
    unsigned n = len - i < 8 ? len - i : 8;
    memcpy(&a, (const void *)(cs + i), n);   /* read_word_at_a_time */
    memcpy(&b, ct + i, n);
    if (a != b) return 1;
  }
  return 0;
}

/* __d_lookup_rcu (fs/dcache.c): one hash chain, one entry (the dentry looked for). */
static inline struct dentry *d_lookup_rcu(struct dentry *parent, struct hlist_bl_node **bucket, struct dentry *child,
                                          const struct qstr *name, unsigned *seqp) {
  (void)READ_ONCE(*parent->d_flags);                                /* parent->d_flags & DCACHE_OP_COMPARE */
  if (READ_ONCE(*bucket) != child->d_hash) return NULL;             /* hlist_bl_for_each_entry_rcu: the head */
  unsigned seq = READ_ONCE(*child->d_seq);                          /* raw_seqcount_begin(&dentry->d_seq) */
  if (READ_ONCE(*child->d_parent) != parent->object) return NULL;   /* dentry->d_parent != parent */
  if (!READ_ONCE(child->d_hash->pprev)) return NULL;                /* d_unhashed */
  if (READ_ONCE(child->d_name->hash_len) != name->hash_len) return NULL;   /* d_name.hash_len */
  if (dentry_cmp(child, name->name, (unsigned)(name->hash_len >> 32))) return NULL;   /* dentry_cmp */
  *seqp = seq;
  return child;
}

/* may_lookup -> inode_permission -> generic_permission/acl_permission_check (fs/namei.c): the
 * directory's mode and owner, read-only. */
static inline int may_lookup(struct inode *dir) {
  uint16_t mode = READ_ONCE(dir->i_mode);
  uint32_t uid = READ_ONCE(dir->i_uid);
  return (mode & 0111) || uid == 0 ? 0 : -1;
}

/* walk_component -> lookup_fast -> step_into (fs/namei.c), RCU mode: look `name` up in nd->path,
 * check the parent did not change, d_revalidate, cross a mount, take the child's inode. */
static inline int walk_component(struct nameidata *nd, struct hlist_bl_node **bucket, struct dentry *child,
                                 struct mount *mnt, unsigned *mount_lock) {
  struct dentry *parent = nd->path;
  struct dentry *d = d_lookup_rcu(parent, bucket, child, &nd->last, &nd->next_seq);   /* lookup_fast */
  if (!d) return -1;
  if (READ_ONCE(*parent->d_seq) != nd->seq) return -1;            /* lookup_fast: read_seqcount_retry(&parent->d_seq) */
  uint32_t flags = READ_ONCE(*d->d_flags);                         /* d_revalidate: DCACHE_OP_REVALIDATE? */
  flags = READ_ONCE(*d->d_flags);                                  /* handle_mounts -> __follow_mount_rcu */
  (void)flags;
  if (flags & DCACHE_MOUNTED) {                                    /* __lookup_mnt: the mount hash */
    if (READ_ONCE(mnt->mnt_mountpoint) != d->object || !READ_ONCE(mnt->mnt_parent)) return -1;
    d = mnt->root_view;                                            /* path->dentry = mounted->mnt.mnt_root */
    (void)READ_ONCE(mnt->mnt_root);
    nd->next_seq = READ_ONCE(*d->d_seq);                           /* read_seqcount_begin(&dentry->d_seq) */
    flags = READ_ONCE(*d->d_flags);
    if (READ_ONCE(*mount_lock) & 1) return -1;                     /* read_seqretry(&mount_lock) */
  }
  struct inode *inode = READ_ONCE(*d->d_inode);                    /* step_into: inode = dentry->d_inode */
  (void)(READ_ONCE(*d->d_flags) & DCACHE_REGULAR_TYPE);             /* step_into: d_is_symlink */
  if (READ_ONCE(*d->d_seq) != nd->next_seq) return -1;             /* step_into: read_seqcount_retry */
  nd->path = d;
  nd->inode = inode;
  nd->seq = nd->next_seq;
  return 0;
}

/* link_path_walk: the component of the path at `p`, hashed into nd->last; returns its end. */
static inline const char *next_component(struct nameidata *nd, const char *p) {
  while (*p == '/') p++;
  unsigned len;
  nd->last.hash_len = hash_name((const unsigned char *)p, &len);
  nd->last.name = (const unsigned char *)p;
  return p + len;
}

/* __d_alloc + d_add (set-up, before the threads): `d` named `name` in `parent` (NULL: a root), hashed
 * into `bucket`, with `inode`, one reference. */
static inline struct dentry dentry_init(struct dentry d, const char *name, struct dentry *parent,
                                        struct hlist_bl_node **bucket, struct inode *inode, uint32_t flags, void *sb) {
  size_t len = strlen(name);
  memcpy(d.d_iname, name, len + 1);                                /* __d_alloc: a short name is inline */
  unsigned hl;
  d.d_name->hash_len = hash_name((const unsigned char *)name, &hl);
  d.d_name->name = d.d_iname;
  *d.d_parent = parent ? parent->object : d.object;
  *d.d_inode = inode;
  *d.d_flags = flags;
  *d.d_sb = sb;
  d.d_hash->pprev = bucket;                                        /* __d_rehash */
  *bucket = d.d_hash;
  d.d_lockref->count = 1;   /* a file: its creator's pin (shmem_mknod's dget); a directory: 1 stands for its children's */
  return d;
}

/* The JSON layout-map entry of a dentry: every field the walk touches. */
static void json_kdentry(const char *name, const struct dentry *d, size_t size) {
  json_object_begin(name, d->object, size);
  json_field("d_flags", d->d_flags, 4);
  json_field("d_seq", d->d_seq, 4);
  json_field("d_hash", d->d_hash, sizeof *d->d_hash);
  json_field("d_parent", d->d_parent, 8);
  json_field("d_name", d->d_name, sizeof *d->d_name);
  json_field("d_inode", d->d_inode, 8);
  json_field("d_iname", d->d_iname, d->iname_len);
  json_field("d_lockref", d->d_lockref, sizeof *d->d_lockref);
  json_field("d_sb", d->d_sb, 8);
  json_object_end();
}

#endif
