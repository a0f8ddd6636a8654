/*
 * batchplan.c
 *	  The planner hook of automatic batching: after the regular planner,
 *	  row-wise onnx_predict calls in the target list of a scan, join or
 *	  projection are moved into an OnnxBatch custom scan above that node
 *	  (batch.h describes the plan shape; batchscan.c executes it).
 *
 * Safety.  Batching changes only when each onnx_predict call runs: the
 * node below is read up to onnx.batch_size rows ahead of what the query
 * has consumed.  A plan is rewritten only where that cannot be observed:
 *
 *	 - the call's model (and output) are constants, and its features
 *	   expression has no volatile function, no subplan and no nested model
 *	   call;
 *	 - the call is evaluated for every row (not inside CASE, COALESCE,
 *	   AND/OR or other conditional expressions);
 *	 - everything the read-ahead evaluates (the node's quals and target
 *	   list, the features expressions, and every node below) is free of
 *	   volatile functions (their side effects and state, such as random()'s
 *	   sequence, happen exactly as without batching) and of functions that
 *	   may raise an error on the data (only leakproof functions may see row
 *	   values: a division by zero ten rows past a LIMIT must not fail the
 *	   query), and the nodes below are plain scans, joins, sorts and the
 *	   like (no locking, no data modification, no aggregation);
 *	 - the statement is a SELECT (or INSERT ... SELECT), not a scrollable
 *	   cursor, and the node is not the inner side of a merge join (which
 *	   needs mark/restore).
 *
 * Everything else of the target list (other expressions, volatile
 * functions, subplans) is still evaluated row by row, in order, by the
 * custom scan's projection.  Rows whose call would fail (bad features, a
 * missing model) are not batched: the custom scan calls onnx_predict for
 * them when it returns them, so that the error comes at the same row.
 *
 * The rewrite happens at plan time: onnx.auto_batch applies to statements
 * planned after it is set (like enable_* settings); onnx.batch_size is read
 * when execution starts.
 *
 * The first statement of a session.  Without onnx_pg in
 * shared_preload_libraries or session_preload_libraries, the library (and
 * with it this planner hook) is loaded by the first statement that uses
 * it, too late for that statement's planning, which was the usual case for
 * a one-statement job (psql -c "INSERT ... SELECT onnx_predict(...)").
 * onnx_predict therefore has a planner support function: it does nothing,
 * but the planner loads the library to call it while it plans such a
 * statement.  The support function notes that a planning ran without this
 * hook, and the executor-start hook rewrites a copy of that statement's
 * plan (the original may belong to the plan cache) before it starts.
 */
#include "onnx_pg.h"
#include "batch.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

bool		onnx_auto_batch = true;
int			onnx_batch_size = ONNX_BATCH_SIZE_DEFAULT;

static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_executor_start_hook = NULL;

/* plannings in progress that went through onnx_planner */
static int	hooked_plannings = 0;
/* a statement that calls onnx_predict was planned without onnx_planner */
static bool missed_planning = false;

/* ---- which functions are ours ---- */

typedef struct PredictFuncEntry
{
	Oid			funcid;			/* hash key */
	bool		is_predict;
} PredictFuncEntry;

static HTAB *predict_funcs = NULL;
static bool predict_funcs_valid = false;

/* pg_proc changed: forget what we know (at the next lookup, not here) */
static void
proc_inval_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	predict_funcs_valid = false;
}

/* from pg_proc: language C, symbol onnx_predict, this library's file */
static bool
lookup_predict_function(Oid funcid)
{
	HeapTuple	tup;
	bool		result = false;

	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(funcid));
	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId &&
		!((Form_pg_proc) GETSTRUCT(tup))->proretset)
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_prosrc, &isnull);

		if (!isnull && strcmp(TextDatumGetCString(src), "onnx_predict") == 0)
		{
			Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);

			if (!isnull)
			{
				char	   *file = TextDatumGetCString(bin);
				const char *base = strrchr(file, '/');
				size_t		elen = strlen(ONNX_EXTENSION_NAME);

				/* "$libdir/onnx_pg", or a path to onnx_pg[.so] */
				base = base ? base + 1 : file;
				result = strncmp(base, ONNX_EXTENSION_NAME, elen) == 0 &&
					(base[elen] == '\0' || strcmp(base + elen, DLSUFFIX) == 0);
			}
		}
	}
	ReleaseSysCache(tup);
	return result;
}

/*
 * Is funcid the C function onnx_predict of this library?  Remembered until
 * pg_proc changes.  The syscache lookup may process invalidations (and run
 * the callback above), so it happens before the hash table is touched.
 */
bool
OnnxIsPredictFunction(Oid funcid)
{
	PredictFuncEntry *e;
	bool		found;
	bool		is_predict;

	if (predict_funcs && predict_funcs_valid)
	{
		e = hash_search(predict_funcs, &funcid, HASH_FIND, NULL);
		if (e)
			return e->is_predict;
	}
	is_predict = lookup_predict_function(funcid);
	if (predict_funcs == NULL || !predict_funcs_valid)
	{
		HASHCTL		ctl;

		if (predict_funcs)
			hash_destroy(predict_funcs);
		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(PredictFuncEntry);
		ctl.hcxt = TopMemoryContext;
		predict_funcs = hash_create("onnx predict functions", 32, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		predict_funcs_valid = true;
	}
	e = hash_search(predict_funcs, &funcid, HASH_ENTER, &found);
	e->is_predict = is_predict;
	return is_predict;
}

/* ---- what the read-ahead may evaluate ---- */

/* an expression the read-ahead may evaluate on rows the query never consumes */
static bool
expr_readahead_safe(Node *node)
{
	ListCell   *lc;

	if (node == NULL)
		return true;
	if (IsA(node, List))
	{
		foreach(lc, (List *) node)
			if (!expr_readahead_safe(lfirst(lc)))
				return false;
		return true;
	}
	if (IsA(node, TargetEntry))
		return expr_readahead_safe((Node *) ((TargetEntry *) node)->expr);
	return !contain_volatile_functions(node) && !contain_leaked_vars(node);
}

static bool plan_readahead_safe(Plan *plan, PlannedStmt *stmt);

static bool
plans_readahead_safe(List *plans, PlannedStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, plans)
		if (!plan_readahead_safe((Plan *) lfirst(lc), stmt))
			return false;
	return true;
}

/*
 * May this subtree be read ahead?  Only node types that merely scan, join,
 * sort or pass rows on, with safe expressions.
 */
static bool
plan_readahead_safe(Plan *plan, PlannedStmt *stmt)
{
	if (plan == NULL)
		return true;
	check_stack_depth();
	if (!expr_readahead_safe((Node *) plan->targetlist) ||
		!expr_readahead_safe((Node *) plan->qual))
		return false;

	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_FunctionScan:	/* functions run to completion at the first fetch */
		case T_Material:
		case T_Sort:
		case T_IncrementalSort:
		case T_Unique:
		case T_Gather:
		case T_GatherMerge:
			break;
		case T_IndexScan:
			{
				IndexScan  *s = (IndexScan *) plan;

				if (!expr_readahead_safe((Node *) s->indexqualorig) ||
					!expr_readahead_safe((Node *) s->indexorderbyorig))
					return false;
			}
			break;
		case T_IndexOnlyScan:
			{
				IndexOnlyScan *s = (IndexOnlyScan *) plan;

				if (!expr_readahead_safe((Node *) s->recheckqual) ||
					!expr_readahead_safe((Node *) s->indexorderby))
					return false;
			}
			break;
		case T_BitmapIndexScan:
			if (!expr_readahead_safe((Node *) ((BitmapIndexScan *) plan)->indexqualorig))
				return false;
			break;
		case T_BitmapHeapScan:
			if (!expr_readahead_safe((Node *) ((BitmapHeapScan *) plan)->bitmapqualorig))
				return false;
			break;
		case T_BitmapAnd:
			return plans_readahead_safe(((BitmapAnd *) plan)->bitmapplans, stmt);
		case T_BitmapOr:
			return plans_readahead_safe(((BitmapOr *) plan)->bitmapplans, stmt);
		case T_TidScan:
			if (!expr_readahead_safe((Node *) ((TidScan *) plan)->tidquals))
				return false;
			break;
		case T_TidRangeScan:
			if (!expr_readahead_safe((Node *) ((TidRangeScan *) plan)->tidrangequals))
				return false;
			break;
		case T_ValuesScan:
			if (!expr_readahead_safe((Node *) ((ValuesScan *) plan)->values_lists))
				return false;
			break;
		case T_SubqueryScan:
			return plan_readahead_safe(((SubqueryScan *) plan)->subplan, stmt);
		case T_CteScan:
			{
				int			id = ((CteScan *) plan)->ctePlanId;

				/* reading ahead runs more of the CTE's plan */
				if (id < 1 || id > list_length(stmt->subplans) ||
					!plan_readahead_safe((Plan *) list_nth(stmt->subplans, id - 1), stmt))
					return false;
			}
			break;
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
			if (!expr_readahead_safe((Node *) ((Join *) plan)->joinqual))
				return false;
			if (IsA(plan, MergeJoin) &&
				!expr_readahead_safe((Node *) ((MergeJoin *) plan)->mergeclauses))
				return false;
			if (IsA(plan, HashJoin) &&
				(!expr_readahead_safe((Node *) ((HashJoin *) plan)->hashclauses) ||
				 !expr_readahead_safe((Node *) ((HashJoin *) plan)->hashkeys)))
				return false;
			break;
		case T_Hash:
			if (!expr_readahead_safe((Node *) ((Hash *) plan)->hashkeys))
				return false;
			break;
		case T_Memoize:
			if (!expr_readahead_safe((Node *) ((Memoize *) plan)->param_exprs))
				return false;
			break;
		case T_Limit:
			if (!expr_readahead_safe(((Limit *) plan)->limitOffset) ||
				!expr_readahead_safe(((Limit *) plan)->limitCount))
				return false;
			break;
		case T_Result:
			if (!expr_readahead_safe(((Result *) plan)->resconstantqual))
				return false;
			break;
		case T_Append:
			return plans_readahead_safe(((Append *) plan)->appendplans, stmt);
		case T_MergeAppend:
			return plans_readahead_safe(((MergeAppend *) plan)->mergeplans, stmt);
		case T_CustomScan:
			/* our own batch scans (checked when they were made) */
			if (((CustomScan *) plan)->methods != &OnnxBatchScanMethods)
				return false;
			return plans_readahead_safe(((CustomScan *) plan)->custom_plans, stmt);
		default:
			/* aggregation, window functions, locking, modification, ... */
			return false;
	}
	return plan_readahead_safe(plan->lefttree, stmt) &&
		plan_readahead_safe(plan->righttree, stmt);
}

/* ---- finding the calls ---- */

/* a call that can be batched: constant names, a safe features expression */
static bool
batchable_call(FuncExpr *f)
{
	Const	   *model;
	Node	   *features;

	if (!OnnxIsPredictFunction(f->funcid) || f->funcretset ||
		(list_length(f->args) != 2 && list_length(f->args) != 3))
		return false;
	model = (Const *) linitial(f->args);
	if (!IsA(model, Const) || model->constisnull)
		return false;
	if (list_length(f->args) == 3)
	{
		Const	   *out = (Const *) lthird(f->args);

		if (!IsA(out, Const) || out->constisnull)
			return false;
	}
	features = (Node *) lsecond(f->args);
	/* an untyped literal is a constant: nothing to batch */
	if (IsA(features, Const))
		return false;
	if (contain_subplans(features) || !expr_readahead_safe(features))
		return false;
	return true;
}

typedef struct FindCalls
{
	List	   *calls;			/* distinct batchable FuncExprs */
} FindCalls;

static bool
has_predict_call_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && OnnxIsPredictFunction(((FuncExpr *) node)->funcid))
		return true;
	return expression_tree_walker(node, has_predict_call_walker, context);
}

/*
 * Collect the batchable calls that every evaluation of node computes:
 * descend only through expressions that evaluate all their arguments.
 */
static void
find_calls(Node *node, FindCalls *fc)
{
	ListCell   *lc;

	if (node == NULL)
		return;
	check_stack_depth();
	switch (nodeTag(node))
	{
		case T_FuncExpr:
			{
				FuncExpr   *f = (FuncExpr *) node;

				if (OnnxIsPredictFunction(f->funcid))
				{
					/* a call nested in the features stays row-wise */
					if (!has_predict_call_walker((Node *) f->args, NULL) &&
						batchable_call(f) && !list_member(fc->calls, f))
						fc->calls = lappend(fc->calls, f);
					return;
				}
				foreach(lc, f->args)
					find_calls(lfirst(lc), fc);
			}
			break;
		case T_OpExpr:
		case T_DistinctExpr:
		case T_NullIfExpr:
			foreach(lc, ((OpExpr *) node)->args)
				find_calls(lfirst(lc), fc);
			break;
		case T_RelabelType:
			find_calls((Node *) ((RelabelType *) node)->arg, fc);
			break;
		case T_CoerceViaIO:
			find_calls((Node *) ((CoerceViaIO *) node)->arg, fc);
			break;
		case T_ArrayCoerceExpr:
			find_calls((Node *) ((ArrayCoerceExpr *) node)->arg, fc);
			break;
		case T_CollateExpr:
			find_calls((Node *) ((CollateExpr *) node)->arg, fc);
			break;
		case T_FieldSelect:
			find_calls((Node *) ((FieldSelect *) node)->arg, fc);
			break;
		case T_NullTest:
			find_calls((Node *) ((NullTest *) node)->arg, fc);
			break;
		case T_BooleanTest:
			find_calls((Node *) ((BooleanTest *) node)->arg, fc);
			break;
		case T_SubscriptingRef:
			{
				SubscriptingRef *s = (SubscriptingRef *) node;

				/* the container first, always; subscripts as well */
				if (s->refassgnexpr == NULL)
				{
					find_calls((Node *) s->refexpr, fc);
					foreach(lc, s->refupperindexpr)
						find_calls(lfirst(lc), fc);
					foreach(lc, s->reflowerindexpr)
						find_calls(lfirst(lc), fc);
				}
			}
			break;
		case T_ArrayExpr:
			foreach(lc, ((ArrayExpr *) node)->elements)
				find_calls(lfirst(lc), fc);
			break;
		case T_RowExpr:
			foreach(lc, ((RowExpr *) node)->args)
				find_calls(lfirst(lc), fc);
			break;
		default:
			/* conditional or unknown: its calls stay row-wise */
			break;
	}
}

/* ---- building the plan ---- */

/*
 * The expression a Var of plan's scope stands for in terms of base
 * relations, for EXPLAIN (the custom_scan_tlist convention); NULL when it
 * cannot be resolved.
 */
typedef struct DisplayCxt
{
	Plan	   *plan;
	bool		failed;
} DisplayCxt;

static Node *display_mutator(Node *node, DisplayCxt *cxt);

static Node *
display_expr(Node *node, Plan *plan)
{
	DisplayCxt	cxt;
	Node	   *res;

	cxt.plan = plan;
	cxt.failed = false;
	res = display_mutator(node, &cxt);
	return cxt.failed ? NULL : res;
}

static Node *
display_mutator(Node *node, DisplayCxt *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0 && IS_SPECIAL_VARNO(((Var *) node)->varno))
	{
		Var		   *var = (Var *) node;
		Plan	   *plan = cxt->plan;
		Plan	   *child = NULL;
		List	   *tlist = NIL;
		TargetEntry *tle;
		Node	   *res;

		if (var->varno == OUTER_VAR)
		{
			if (IsA(plan, Append))
				child = linitial(((Append *) plan)->appendplans);
			else if (IsA(plan, MergeAppend))
				child = linitial(((MergeAppend *) plan)->mergeplans);
			else
				child = plan->lefttree;
			tlist = child ? child->targetlist : NIL;
		}
		else if (var->varno == INNER_VAR)
		{
			child = plan->righttree;
			tlist = child ? child->targetlist : NIL;
		}
		else if (var->varno == INDEX_VAR)
		{
			if (IsA(plan, IndexOnlyScan))
				tlist = ((IndexOnlyScan *) plan)->indextlist;
			else if (IsA(plan, CustomScan))
				tlist = ((CustomScan *) plan)->custom_scan_tlist;
			else if (IsA(plan, ForeignScan))
				tlist = ((ForeignScan *) plan)->fdw_scan_tlist;
			/* entries of these are already in base-relation terms */
			tle = tlist ? get_tle_by_resno(tlist, var->varattno) : NULL;
			if (tle == NULL)
			{
				cxt->failed = true;
				return node;
			}
			return (Node *) copyObject(tle->expr);
		}
		tle = tlist ? get_tle_by_resno(tlist, var->varattno) : NULL;
		if (tle == NULL || child == NULL)
		{
			cxt->failed = true;
			return node;
		}
		cxt->plan = child;
		res = display_mutator((Node *) tle->expr, cxt);
		cxt->plan = plan;
		return res;
	}
	return expression_tree_mutator(node, display_mutator, (void *) cxt);
}

/* position of node (by equal()) in list */
static int
list_index_of(List *list, void *node)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, list)
	{
		if (equal(lfirst(lc), node))
			return i;
		i++;
	}
	elog(ERROR, "onnx batch: expression not found");
	return -1;
}

typedef struct ReplaceCxt
{
	List	   *calls;			/* batched FuncExprs: prediction columns */
	List	   *pass;			/* passed-through Vars */
	int			n_pass_final;	/* known after collection */
	bool		collect;		/* first pass: collect Vars */
} ReplaceCxt;

/*
 * Collect (collect = true) or replace the Vars and batched calls of a target
 * list expression by columns of the custom scan tuple.
 */
static Node *
replace_mutator(Node *node, ReplaceCxt *cxt)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, FuncExpr) && list_member(cxt->calls, node))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (cxt->collect)
			return node;
		return (Node *) makeVar(INDEX_VAR,
								cxt->n_pass_final + list_index_of(cxt->calls, node) + 1,
								f->funcresulttype, -1, f->funccollid, 0);
	}
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *v = (Var *) node;

		if (cxt->collect)
		{
			if (!list_member(cxt->pass, v))
				cxt->pass = lappend(cxt->pass, v);
			return node;
		}
		return (Node *) makeVar(INDEX_VAR, list_index_of(cxt->pass, v) + 1,
								v->vartype, v->vartypmod, v->varcollid, 0);
	}
	return expression_tree_mutator(node, replace_mutator, (void *) cxt);
}

static int	max_node_id(PlannedStmt *stmt);

typedef struct RewriteCxt
{
	PlannedStmt *stmt;
	int			next_node_id;
	int			rewritten;
} RewriteCxt;

/* node types whose target list is computed per row of their input */
static bool
projecting_node(Plan *plan)
{
	switch (nodeTag(plan))
	{
		case T_SeqScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_CteScan:
		case T_NestLoop:
		case T_MergeJoin:
		case T_HashJoin:
		case T_Gather:
			return true;
		case T_Result:
			return plan->lefttree != NULL && ((Result *) plan)->resconstantqual == NULL;
		default:
			return false;
	}
}

/*
 * Rewrite plan if its target list has batchable calls and reading it ahead
 * is safe; returns the plan to put in its place.
 */
static Plan *
maybe_batch(Plan *plan, RewriteCxt *rc)
{
	FindCalls	fc = {NIL};
	ListCell   *lc;
	ReplaceCxt	cxt;
	List	   *child_tlist = NIL;
	List	   *scan_tlist = NIL;
	List	   *new_tlist = NIL;
	List	   *calls_private = NIL;
	CustomScan *cscan;
	int			resno;

	if (!projecting_node(plan))
		return plan;
	foreach(lc, plan->targetlist)
		find_calls((Node *) ((TargetEntry *) lfirst(lc))->expr, &fc);
	if (fc.calls == NIL)
		return plan;
	/* read-ahead: the node's own quals and every node below it */
	{
		List	   *save = plan->targetlist;
		bool		safe;

		plan->targetlist = NIL;	/* replaced: checked through the calls */
		safe = plan_readahead_safe(plan, rc->stmt);
		plan->targetlist = save;
		if (!safe)
			return plan;
	}

	/* the Vars the rest of the target list needs */
	memset(&cxt, 0, sizeof(cxt));
	cxt.calls = fc.calls;
	cxt.collect = true;
	foreach(lc, plan->targetlist)
		replace_mutator((Node *) ((TargetEntry *) lfirst(lc))->expr, &cxt);
	cxt.n_pass_final = list_length(cxt.pass);

	/* P': features, then passed-through values; and the scan tuple's description */
	resno = 1;
	foreach(lc, fc.calls)
	{
		FuncExpr   *f = (FuncExpr *) lfirst(lc);

		child_tlist = lappend(child_tlist,
							  makeTargetEntry(copyObject(lsecond(f->args)), resno, NULL, false));
		calls_private = lappend(calls_private,
								list_make2(copyObject(f), makeInteger(resno - 1)));
		resno++;
	}
	foreach(lc, cxt.pass)
	{
		Node	   *shown = display_expr(lfirst(lc), plan);

		if (shown == NULL)
			return plan;
		child_tlist = lappend(child_tlist, makeTargetEntry(copyObject(lfirst(lc)), resno++, NULL, false));
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) shown, list_length(scan_tlist) + 1, NULL, false));
	}
	foreach(lc, fc.calls)
	{
		Node	   *shown = display_expr(lfirst(lc), plan);

		if (shown == NULL)
			return plan;
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry((Expr *) shown, list_length(scan_tlist) + 1, NULL, false));
	}

	/* the custom scan's target list: the old one over the scan tuple */
	cxt.collect = false;
	foreach(lc, plan->targetlist)
	{
		TargetEntry *tle = flatCopyTargetEntry((TargetEntry *) lfirst(lc));

		tle->expr = (Expr *) replace_mutator((Node *) tle->expr, &cxt);
		new_tlist = lappend(new_tlist, tle);
	}

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = plan->startup_cost;
	cscan->scan.plan.total_cost = plan->total_cost;
	cscan->scan.plan.plan_rows = plan->plan_rows;
	cscan->scan.plan.plan_width = plan->plan_width;
	cscan->scan.plan.parallel_aware = false;
	cscan->scan.plan.parallel_safe = plan->parallel_safe;
	cscan->scan.plan.async_capable = false;
	if (rc->next_node_id < 0)
		rc->next_node_id = max_node_id(rc->stmt) + 1;
	cscan->scan.plan.plan_node_id = rc->next_node_id++;
	cscan->scan.plan.targetlist = new_tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.extParam = bms_copy(plan->extParam);
	cscan->scan.plan.allParam = bms_copy(plan->allParam);
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = list_make1(plan);
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make3(makeInteger(cxt.n_pass_final), calls_private,
									   makeInteger(list_length(fc.calls)));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = NULL;
	cscan->methods = &OnnxBatchScanMethods;

	plan->targetlist = child_tlist;
	rc->rewritten++;
	return (Plan *) cscan;
}

/* ---- aggregates: calls in the arguments of Aggrefs ---- */

typedef struct AggCalls
{
	List	   *calls;			/* batchable FuncExprs, features a column of the input */
	int			n_input;		/* columns of the Agg's input */
} AggCalls;

/* collect the batchable calls in the per-row expressions of Aggrefs */
static bool
agg_calls_walker(Node *node, AggCalls *ac)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;
		FindCalls	fc = {NIL};
		ListCell   *lc;

		/* with FILTER, the arguments are computed only for rows that pass it */
		if (agg->aggfilter == NULL)
			foreach(lc, agg->args)
				find_calls((Node *) ((TargetEntry *) lfirst(lc))->expr, &fc);
		else
			find_calls((Node *) agg->aggfilter, &fc);
		foreach(lc, fc.calls)
		{
			FuncExpr   *f = (FuncExpr *) lfirst(lc);
			Var		   *v = (Var *) lsecond(f->args);

			/* the features must be a column of the input, read as it is */
			if (IsA(v, Var) && v->varno == OUTER_VAR && v->varattno >= 1 &&
				v->varattno <= ac->n_input && !list_member(ac->calls, f))
				ac->calls = lappend(ac->calls, f);
		}
		return false;
	}
	return expression_tree_walker(node, agg_calls_walker, (void *) ac);
}

typedef struct AggReplace
{
	List	   *calls;
	int			n_input;
	bool		in_aggref;
} AggReplace;

/* the calls inside Aggrefs -> the columns the batch appends to the input */
static Node *
agg_replace_mutator(Node *node, AggReplace *ar)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Aggref) && !ar->in_aggref)
	{
		Node	   *res;

		ar->in_aggref = true;
		res = expression_tree_mutator(node, agg_replace_mutator, (void *) ar);
		ar->in_aggref = false;
		return res;
	}
	if (ar->in_aggref && IsA(node, FuncExpr) && list_member(ar->calls, node))
	{
		FuncExpr   *f = (FuncExpr *) node;

		return (Node *) makeVar(OUTER_VAR, ar->n_input + list_index_of(ar->calls, node) + 1,
								f->funcresulttype, -1, f->funccollid, 0);
	}
	return expression_tree_mutator(node, agg_replace_mutator, (void *) ar);
}

/*
 * An Agg whose aggregates' arguments call onnx_predict on a column of its
 * input: put a batch between the Agg and its input that appends the
 * predictions to the input's columns.
 */
static Plan *
maybe_batch_agg(Agg *agg, RewriteCxt *rc)
{
	Plan	   *input = agg->plan.lefttree;
	AggCalls	ac;
	AggReplace	ar;
	ListCell   *lc;
	List	   *scan_tlist = NIL;
	List	   *tlist = NIL;
	List	   *calls_private = NIL;
	CustomScan *cscan;
	int			resno = 1;

	if (input == NULL || agg->groupingSets != NIL || agg->chain != NIL)
		return (Plan *) agg;
	memset(&ac, 0, sizeof(ac));
	ac.n_input = list_length(input->targetlist);
	agg_calls_walker((Node *) agg->plan.targetlist, &ac);
	agg_calls_walker((Node *) agg->plan.qual, &ac);
	if (ac.calls == NIL || !plan_readahead_safe(input, rc->stmt))
		return (Plan *) agg;

	/* the scan tuple: the input's columns, then the predictions */
	foreach(lc, input->targetlist)
	{
		TargetEntry *tle = (TargetEntry *) lfirst(lc);
		Node	   *shown = display_expr((Node *) tle->expr, input);

		if (shown == NULL)
			return (Plan *) agg;
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) shown, resno, NULL, false));
		tlist = lappend(tlist, makeTargetEntry((Expr *) makeVar(INDEX_VAR, resno,
																exprType((Node *) tle->expr),
																exprTypmod((Node *) tle->expr),
																exprCollation((Node *) tle->expr), 0),
											   resno, tle->resname, false));
		resno++;
	}
	foreach(lc, ac.calls)
	{
		FuncExpr   *f = (FuncExpr *) lfirst(lc);
		Node	   *shown = display_expr((Node *) f, (Plan *) agg);

		if (shown == NULL)
			return (Plan *) agg;
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) shown, resno, NULL, false));
		tlist = lappend(tlist, makeTargetEntry((Expr *) makeVar(INDEX_VAR, resno, f->funcresulttype,
																-1, f->funccollid, 0),
											   resno, NULL, false));
		calls_private = lappend(calls_private,
								list_make2(copyObject(f),
										   makeInteger(((Var *) lsecond(f->args))->varattno - 1)));
		resno++;
	}

	cscan = makeNode(CustomScan);
	cscan->scan.plan.startup_cost = input->startup_cost;
	cscan->scan.plan.total_cost = input->total_cost;
	cscan->scan.plan.plan_rows = input->plan_rows;
	cscan->scan.plan.plan_width = input->plan_width + 16 * list_length(ac.calls);
	cscan->scan.plan.parallel_safe = input->parallel_safe;
	if (rc->next_node_id < 0)
		rc->next_node_id = max_node_id(rc->stmt) + 1;
	cscan->scan.plan.plan_node_id = rc->next_node_id++;
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.extParam = bms_copy(input->extParam);
	cscan->scan.plan.allParam = bms_copy(input->allParam);
	cscan->scan.scanrelid = 0;
	cscan->custom_plans = list_make1(input);
	cscan->custom_private = list_make3(makeInteger(ac.n_input), calls_private, makeInteger(0));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &OnnxBatchScanMethods;

	ar.calls = ac.calls;
	ar.n_input = ac.n_input;
	ar.in_aggref = false;
	agg->plan.targetlist = (List *) agg_replace_mutator((Node *) agg->plan.targetlist, &ar);
	agg->plan.qual = (List *) agg_replace_mutator((Node *) agg->plan.qual, &ar);
	agg->plan.lefttree = (Plan *) cscan;
	rc->rewritten++;
	return (Plan *) agg;
}

static Plan *rewrite_plan(Plan *plan, RewriteCxt *rc, bool mark_restore);

static List *
rewrite_list(List *plans, RewriteCxt *rc)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = rewrite_plan((Plan *) lfirst(lc), rc, false);
	return plans;
}

/* children first, then the node itself */
static Plan *
rewrite_plan(Plan *plan, RewriteCxt *rc, bool mark_restore)
{
	if (plan == NULL)
		return NULL;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_ModifyTable:
			/* below INSERT only: UPDATE, DELETE and MERGE lock and recheck rows */
			if (((ModifyTable *) plan)->operation != CMD_INSERT)
				return plan;
			break;
		case T_LockRows:
			/* locking is fine above a batch, not below it: the child is a row source */
			break;
		case T_Append:
			rewrite_list(((Append *) plan)->appendplans, rc);
			break;
		case T_MergeAppend:
			rewrite_list(((MergeAppend *) plan)->mergeplans, rc);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan = rewrite_plan(((SubqueryScan *) plan)->subplan, rc, false);
			break;
		case T_CustomScan:
			rewrite_list(((CustomScan *) plan)->custom_plans, rc);
			break;
		case T_BitmapAnd:
		case T_BitmapOr:
			return plan;
		default:
			break;
	}
	plan->lefttree = rewrite_plan(plan->lefttree, rc, false);
	/* the inner side of a merge join may be marked and restored */
	plan->righttree = rewrite_plan(plan->righttree, rc,
								   IsA(plan, MergeJoin) && !((MergeJoin *) plan)->skip_mark_restore);
	if (mark_restore)
		return plan;
	if (IsA(plan, Agg))
		return maybe_batch_agg((Agg *) plan, rc);
	return maybe_batch(plan, rc);
}

static bool
max_node_id_walker(Plan *plan, int *max_id)
{
	ListCell   *lc;

	if (plan == NULL)
		return false;
	*max_id = Max(*max_id, plan->plan_node_id);
	max_node_id_walker(plan->lefttree, max_id);
	max_node_id_walker(plan->righttree, max_id);
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				max_node_id_walker(lfirst(lc), max_id);
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				max_node_id_walker(lfirst(lc), max_id);
			break;
		case T_SubqueryScan:
			max_node_id_walker(((SubqueryScan *) plan)->subplan, max_id);
			break;
		case T_CustomScan:
			foreach(lc, ((CustomScan *) plan)->custom_plans)
				max_node_id_walker(lfirst(lc), max_id);
			break;
		case T_BitmapAnd:
			foreach(lc, ((BitmapAnd *) plan)->bitmapplans)
				max_node_id_walker(lfirst(lc), max_id);
			break;
		case T_BitmapOr:
			foreach(lc, ((BitmapOr *) plan)->bitmapplans)
				max_node_id_walker(lfirst(lc), max_id);
			break;
		default:
			break;
	}
	return false;
}

/* plan_node_ids must stay unique: new nodes number on from the largest */
static int
max_node_id(PlannedStmt *stmt)
{
	ListCell   *lc;
	int			max_id = 0;

	max_node_id_walker(stmt->planTree, &max_id);
	foreach(lc, stmt->subplans)
		max_node_id_walker((Plan *) lfirst(lc), &max_id);
	return max_id;
}

/* batch the calls of a planned statement, in place; how many batches it got */
static int
batch_statement(PlannedStmt *stmt)
{
	RewriteCxt	rc;
	ListCell   *lc;

	if (stmt->commandType != CMD_SELECT && stmt->commandType != CMD_INSERT)
		return 0;
	rc.stmt = stmt;
	rc.next_node_id = -1;		/* computed at the first rewrite */
	rc.rewritten = 0;

	stmt->planTree = rewrite_plan(stmt->planTree, &rc, false);
	foreach(lc, stmt->subplans)
		lfirst(lc) = rewrite_plan((Plan *) lfirst(lc), &rc, false);
	return rc.rewritten;
}

static PlannedStmt *
onnx_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	hooked_plannings++;
	PG_TRY();
	{
		if (prev_planner_hook)
			stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
		else
			stmt = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		hooked_plannings--;
	}
	PG_END_TRY();

	if (onnx_auto_batch && !(cursorOptions & CURSOR_OPT_SCROLL))
		batch_statement(stmt);
	return stmt;
}

/*
 * The statement planned without onnx_planner is the next one to start (the
 * executor starts a statement right after planning it, EXPLAIN included):
 * batch a copy of its plan.  A spurious note (the support function also
 * runs when an expression is planned on its own, for example a column
 * default) rewrites nothing: an already batched plan has no calls left.
 */
static void
onnx_executor_start(QueryDesc *queryDesc, int eflags)
{
	if (missed_planning)
	{
		missed_planning = false;
		if (onnx_auto_batch && !(eflags & EXEC_FLAG_BACKWARD))
		{
			PlannedStmt *copy = copyObject(queryDesc->plannedstmt);

			if (batch_statement(copy) > 0)
				queryDesc->plannedstmt = copy;
		}
	}
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * The planner support function of onnx_predict: no simplification, cost or
 * row estimate to offer.  It exists so that the planner loads this library
 * while it plans a statement calling onnx_predict (see the top of the
 * file), and it notes a planning that ran without onnx_planner.
 */
PG_FUNCTION_INFO_V1(onnx_predict_support);
Datum
onnx_predict_support(PG_FUNCTION_ARGS)
{
	if (hooked_plannings == 0 && onnx_auto_batch)
		missed_planning = true;
	PG_RETURN_POINTER(NULL);
}

void
OnnxBatchInit(void)
{
	DefineCustomBoolVariable("onnx.auto_batch",
							 "Runs row-wise onnx_predict calls over the rows of a scan in batches.",
							 "Applies to statements planned afterwards; EXPLAIN shows the batches "
							 "as Custom Scan (OnnxBatch).",
							 &onnx_auto_batch,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("onnx.batch_size",
							"Rows per model run for automatic batching and onnx_predict_query.",
							NULL,
							&onnx_batch_size,
							ONNX_BATCH_SIZE_DEFAULT, ONNX_BATCH_SIZE_MIN, ONNX_BATCH_SIZE_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	OnnxBatchScanInit();
	CacheRegisterSyscacheCallback(PROCOID, proc_inval_callback, (Datum) 0);
	prev_planner_hook = planner_hook;
	planner_hook = onnx_planner;
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = onnx_executor_start;
}
