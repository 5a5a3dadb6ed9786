
{"partitions":[{"topic":"orders","partition":2,"node":"n1","epoch":7}],"committers":[{"table":"db\u001forders","node":"n1","epoch":7}]}