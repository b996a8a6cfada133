/* SPDX-License-Identifier: GPL-2.0 */
/*
 * exec beyond file_open: execve's check of each binary and interpreter
 * (bprm_check_security), and executable mappings of files, which is how the dynamic
 * loader runs code: `ld.so /denied/program` opens the program for reading only, then
 * maps it PROT_EXEC (mmap_file), or makes a mapping executable later (file_mprotect).
 * execve also records which `when exe` patterns each binary matches (hooks/exe.bpf.h).
 */
#ifndef BUMBLEWRAP_HOOK_EXEC_H
#define BUMBLEWRAP_HOOK_EXEC_H

#include "decide.bpf.h"

static __always_inline int bw_check_exec(struct file *file, __u32 pathless, int ret)
{
	struct bw_hook h;

	if (ret)
		return ret;
	if (!file || !bw_hook_enter(&h))
		return 0;
	return bw_check(&h, file->f_path.mnt, file->f_path.dentry, BW_KIND(BW_ACCESS_EXEC) | pathless);
}

SEC("lsm/bprm_check_security")
int BPF_PROG(bw_bprm_check_security, struct linux_binprm *bprm, int ret)
{
	return bw_check_exec(bprm->file, BW_PATHLESS_DENIED | (BW_RECORDS_EXE ? BW_RECORD_EXE : 0), ret);
}

/* prot, not reqprot: what the mapping gets (READ_IMPLIES_EXEC may add PROT_EXEC). */
SEC("lsm/mmap_file")
int BPF_PROG(bw_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot, unsigned long flags,
	     int ret)
{
	if (!(prot & PROT_EXEC))
		return ret;
	return bw_check_exec(file, BW_PATHLESS_DENIED, ret);
}

/* From 6.2 an overlayfs mapping's vm_file is the layer's backing file, on an internal
 * mount: pathless files pass here, so mprotect(PROT_EXEC) of a memfd or of an overlay
 * file is not denied (mmap_file still sees the overlay file). */
SEC("lsm/file_mprotect")
int BPF_PROG(bw_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot, int ret)
{
	if (!(prot & PROT_EXEC))
		return ret;
	return bw_check_exec(vma->vm_file, 0, ret);
}

#endif /* BUMBLEWRAP_HOOK_EXEC_H */
