/* A dentry-like object in the three layouts cohtb compares, and a view of its lookup fields. */
#ifndef COHTB_DENTRY_H
#define COHTB_DENTRY_H

#include "lockref.h"

struct qstr { uint64_t hash_len; const char *name; };

/* Lookup fields first, as in struct dentry; `shared` keeps d_lockref on their line. */
struct dentry_shared {
  uint32_t d_flags;
  uint32_t d_seq;
  uint64_t d_hash[2];
  void *d_parent;
  struct qstr d_name;
  struct lockref d_lockref;       /* offset 48: same line as d_name */
  void *d_inode;
  char d_iname[40];
  void *d_op, *d_sb, *d_fsdata;
  uint64_t d_time;
} __aligned_line;

struct dentry_split {
  uint32_t d_flags;
  uint32_t d_seq;
  uint64_t d_hash[2];
  void *d_parent;
  struct qstr d_name;
  void *d_inode;
  char d_iname[40];
  void *d_op, *d_sb, *d_fsdata;
  uint64_t d_time;
  struct lockref d_lockref;       /* offset 128: a line of its own, as after the 6.11 reorder */
  void *d_lru[2];
} __aligned_line;

struct dentry_padded {
  uint32_t d_flags;
  uint32_t d_seq;
  uint64_t d_hash[2];
  void *d_parent;
  struct qstr d_name;
  void *d_inode;
  char d_iname[40];
  struct lockref d_lockref __aligned_line;   /* ____cacheline_aligned: padded to a whole line */
  void *d_op, *d_sb, *d_fsdata;
  uint64_t d_time;
} __aligned_line;

/* The fields every lookup reads, wherever the layout puts them. */
struct dentry_view {
  uint32_t *d_flags, *d_seq;
  uint64_t *d_hash;
  void **d_parent;
  struct qstr *d_name;
  struct lockref *d_lockref;
  void *object;
  size_t size;
};

static const char *dentry_layouts[] = {"shared", "split", "padded", NULL};

#define DENTRY_VIEW(T, p) ((struct dentry_view){&(p)->d_flags, &(p)->d_seq, (p)->d_hash, &(p)->d_parent, &(p)->d_name, \
                                         &(p)->d_lockref, (p), sizeof(T)})


/* Storage for one dentry in the given layout (static, so its address is stable and in .bss). */
static struct dentry_view dentry_in_layout(const char *layout, int which) {
  static struct dentry_shared shared[2];
  static struct dentry_split split[2];
  static struct dentry_padded padded[2];
  if (!strcmp(layout, "shared")) return DENTRY_VIEW(struct dentry_shared, &shared[which]);
  if (!strcmp(layout, "split")) return DENTRY_VIEW(struct dentry_split, &split[which]);
  return DENTRY_VIEW(struct dentry_padded, &padded[which]);
}

/* The layout map entry of a dentry: its lookup fields and its count word. */
static void json_dentry(const char *name, const struct dentry_view *d) {
  json_object_begin(name, d->object, d->size);
  json_field("d_flags", d->d_flags, sizeof *d->d_flags);
  json_field("d_seq", d->d_seq, sizeof *d->d_seq);
  json_field("d_hash", d->d_hash, 16);
  json_field("d_parent", d->d_parent, sizeof *d->d_parent);
  json_field("d_name", d->d_name, sizeof *d->d_name);
  json_field("d_lockref", d->d_lockref, sizeof *d->d_lockref);
  json_object_end();
}

#endif
